"""Every file of examples/requests goes through the CLI as it is: the instantiate ones as the
REQUEST argument, the others with `--request FILE` (scale, heal, terminate); options given as
well replace the file's keys. The non-instantiate ones then run on the real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.unit.cli.cli_fake import SEED_REQUEST, FakeVnfm, new_vnf, request_file, run
from vnfm.entrypoints.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "requests"
FILES = sorted(p.name for p in EXAMPLES.glob("*.json"))
TASKS = {"instantiate": "instantiate", "scale": "scale", "heal": "heal", "terminate": "terminate"}


def command_for(name: str, vnf_id: str) -> list[str]:
    task = TASKS[name.split("-", 1)[0]]
    path = str(EXAMPLES / name)
    if task == "instantiate":
        return ["vnf", "instantiate", vnf_id, path]
    return ["vnf", task, vnf_id, "--request", path, *(["--yes"] if task == "heal" else [])]


def test_every_file_has_a_command() -> None:
    assert len(FILES) >= 8 and {n.split("-", 1)[0] for n in FILES} == set(TASKS)


@pytest.mark.parametrize("name", FILES)
def test_each_file_is_sent_as_it_is(fake: FakeVnfm, name: str) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, *command_for(name, vnf_id))
    assert res.exit_code == 0, res.output
    task = TASKS[name.split("-", 1)[0]]
    assert fake.bodies("POST", f"/{task}") == [json.loads((EXAMPLES / name).read_text())]


def test_options_replace_the_files_keys(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    res = run(fake, "vnf", "scale", vnf_id, "--request", str(EXAMPLES / "scale-out-workers.json"),
              "--number-of-steps", "2", "--wait")
    assert res.exit_code == 0, res.output
    res = run(fake, "vnf", "terminate", vnf_id, "--request", str(EXAMPLES / "terminate-graceful.json"),
              "--forceful")
    assert res.exit_code == 0, res.output
    assert fake.bodies("POST", "/scale") == [{"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 2}]
    assert fake.bodies("POST", "/terminate") == [{"terminationType": "FORCEFUL"}]


def test_what_the_request_lacks_is_named(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    partial = tmp_path / "p.json"
    partial.write_text('{"aspectId": "worker_instance"}')
    res = run(fake, "vnf", "scale", vnf_id, "--request", str(partial))
    assert res.exit_code == 2 and "missing --type (or 'type' in --request FILE)" in res.stderr
    partial.write_text("[1]")
    res = run(fake, "vnf", "heal", vnf_id, "--request", str(partial), "--yes")
    assert res.exit_code == 2 and "must hold a JSON object" in res.stderr
    assert fake.bodies("POST", "/scale") == fake.bodies("POST", "/heal") == []


def test_the_files_run_on_the_real_server(server_url: str) -> None:
    from vnfm.examples import example_package_dir

    def cli_run(*args: str) -> Any:
        res = CliRunner().invoke(cli, ["--endpoint", server_url, *args])
        assert res.exit_code == 0, res.output
        return res

    pkg = json.loads(cli_run("-o", "json", "package", "create").stdout)["id"]
    cli_run("package", "upload", pkg, str(example_package_dir()))
    vnfd = cli_run("package", "show", pkg, "-o", "value", "-c", "vnfdId").stdout.strip()
    vnf_id = cli_run("vnf", "create", vnfd, "-o", "value", "-c", "id").stdout.strip()

    def workers() -> int:
        inst = json.loads(cli_run("vnf", "show", vnf_id, "-o", "json").stdout)
        return sum(v["vduId"] == "workerNode" for v in inst["instantiatedVnfInfo"]["vnfcResourceInfo"])

    cli_run(*command_for("instantiate-single-master.json", vnf_id), "--wait", "--timeout", "120")
    before = workers()
    cli_run(*command_for("scale-out-workers.json", vnf_id), "--wait", "--timeout", "120")
    assert workers() == before + 1
    cli_run(*command_for("scale-in-workers.json", vnf_id), "--wait", "--timeout", "120")
    assert workers() == before
    cli_run(*command_for("heal-entire.json", vnf_id), "--wait", "--timeout", "120")
    state = cli_run(*command_for("terminate-graceful.json", vnf_id), "--wait", "--timeout", "120",
                    "-o", "value", "-c", "operationState")
    assert state.stdout.strip() == "COMPLETED"
