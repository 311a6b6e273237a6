"""The root group (main.py): global options, errors as one line, help."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import httpx
from click.testing import CliRunner

import vnfm
from tests.unit.cli.cli_fake import BASE, FakeVnfm, run
from vnfm.entrypoints.cli.main import cli


def test_problem_details_rendering(fake: FakeVnfm) -> None:
    res = run(fake, "vnf", "show", "nope")
    assert res.exit_code == 1
    assert res.stderr.strip() == "Error 404 Not Found: no such resource nope"
    assert res.stdout == ""


def test_fastapi_validation_errors_are_readable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(422, json={"detail": [{"loc": ["body", "flavourId"], "msg": "field required"}]})

    res = CliRunner().invoke(
        cli, ["--endpoint", BASE, "vnf", "list"], obj={"transport": httpx.MockTransport(handler)}
    )
    assert res.exit_code == 1
    assert (
        "Error 422 Unprocessable Content: body.flavourId: field required" in res.stderr
        or "Error 422 Unprocessable Entity: body.flavourId: field required" in res.stderr
    )


def test_connection_refused_says_how_to_start_the_server() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    res = CliRunner().invoke(
        cli,
        ["--endpoint", "http://127.0.0.1:9", "vnf", "list"],
        obj={"transport": httpx.MockTransport(handler)},
    )
    assert res.exit_code == 1
    assert "not running at http://127.0.0.1:9 (connection refused)" in res.stderr
    assert "vnfm server" in res.stderr


def test_connection_refused_for_real(unused_tcp_port: int) -> None:
    res = CliRunner().invoke(cli, ["--endpoint", f"http://127.0.0.1:{unused_tcp_port}", "package", "list"])
    assert res.exit_code == 1
    assert "not running at" in res.stderr


def test_token_is_sent_and_never_printed(fake: FakeVnfm) -> None:
    res = run(fake, "vnf", "list", token="my-t0ken")
    assert res.exit_code == 0
    assert fake.requests[-1].headers["X-Auth-Token"] == "my-t0ken"
    assert "my-t0ken" not in res.output
    res = run(fake, "vnf", "list", token="bad-token")
    assert res.exit_code == 1
    assert "Error 401 Unauthorized" in res.stderr and "bad-token" not in res.output
    help_text = CliRunner().invoke(cli, ["--help"], env={"VNFM_TOKEN": "env-t0ken"}).output
    assert "env-t0ken" not in help_text


def test_token_from_environment(fake: FakeVnfm) -> None:
    res = CliRunner().invoke(
        cli,
        ["--endpoint", BASE, "vnf", "list"],
        obj={"transport": fake.transport()},
        env={"VNFM_TOKEN": "env-t0ken"},
    )
    assert res.exit_code == 0
    assert fake.requests[-1].headers["X-Auth-Token"] == "env-t0ken"


def test_broken_connection_is_reported_not_raised() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("Connection reset by peer", request=request)

    res = CliRunner().invoke(
        cli, ["--endpoint", BASE, "vnf", "list"], obj={"transport": httpx.MockTransport(handler)}
    )
    assert res.exit_code == 1
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert (
        "no usable answer from the vnfm server at http://fake-vnfm: connection lost (ReadError" in res.stderr
    )


def test_every_command_has_help_with_an_example() -> None:
    def walk(cmd: click.Command, path: list[str]) -> list[list[str]]:
        out = [path]
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                out += walk(sub, [*path, name])
        return out

    paths = walk(cli, [])
    assert len(paths) > 30
    for path in paths:
        res = CliRunner().invoke(cli, [*path, "--help"])
        assert res.exit_code == 0, path
        assert "Example" in res.output or path == [], path
        summary = res.output.split("\n\n")[1].strip()
        assert summary and len(summary.splitlines()[0]) <= 100, path


# the commands `vnfm --help` and each group's --help listed before the CLI was split by group
COMMANDS: dict[tuple[str, ...], list[str]] = {
    (): ["auth", "completion", "demo", "dev", "doctor", "healthcheck", "op", "package", "server", "sim",
         "subscription", "vim", "vnf"],
    ("auth",): ["hash-secret", "new-secret-key", "rotate-key"],
    ("dev",): ["params-doc"],
    ("op",): ["cancel", "fail", "list", "retry", "rollback", "show", "watch"],
    ("package",): ["create", "delete", "disable", "enable", "list", "show", "upload", "vnfd"],
    ("sim",): ["state"],
    ("subscription",): ["create", "delete", "list", "show"],
    ("vim",): ["delete", "kubeconfig", "list", "register", "show"],
    ("vnf",): ["create", "delete", "heal", "instantiate", "list", "scale", "show", "terminate"],
}


def listed_commands(help_text: str) -> list[str]:
    """The names in the 'Commands:' section of a --help text."""
    section = help_text.split("\nCommands:\n", 1)[1]
    return re.findall(r"^  (\S+)", section, re.M)


def test_help_of_the_root_and_every_group_lists_the_same_commands() -> None:
    for path, expected in COMMANDS.items():
        res = CliRunner().invoke(cli, [*path, "--help"], prog_name="vnfm")
        assert res.exit_code == 0, (path, res.output)
        assert res.output.startswith(f"Usage: {' '.join(['vnfm', *path])} [OPTIONS] COMMAND [ARGS]..."), path
        assert listed_commands(res.output) == expected, path
    groups = {name for name, c in cli.commands.items() if isinstance(c, click.Group)}
    assert {p[0] for p in COMMANDS if p} == groups


def test_console_entry_point_shows_help_without_loading_the_server() -> None:
    """`vnfm --help` through main(), in a fresh interpreter: the API server, the database layer and
    the OpenStack SDK are not imported for it (they would make every command slow to start)."""
    script = (
        "import sys\n"
        "from vnfm.entrypoints.cli.main import main\n"
        "sys.argv = ['vnfm', '--help']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = ['fastapi', 'sqlalchemy', 'openstack', 'vnfm.entrypoints.api', 'vnfm.bootstrap']\n"
        "print('LOADED', [m for m in heavy if m in sys.modules], code)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(vnfm.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Usage: vnfm [OPTIONS] COMMAND [ARGS]...")
    assert listed_commands(out.stdout.rsplit("LOADED", 1)[0]) == COMMANDS[()]
    assert out.stdout.rstrip().endswith("LOADED [] 0"), out.stdout[-300:]
