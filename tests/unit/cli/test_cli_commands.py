from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import click
import httpx
import pytest
from click.testing import CliRunner, Result

sys.path.insert(0, str(Path(__file__).parent))
from cli_fake import BASE, FakeVnfm  # noqa: E402

from vnfm.entrypoints.cli.main import cli  # noqa: E402


@pytest.fixture
def fake() -> FakeVnfm:
    return FakeVnfm()


def run(fake: FakeVnfm, *args: str, token: str | None = None) -> Result:
    argv = ["--endpoint", BASE]
    if token:
        argv += ["--token", token]
    return CliRunner().invoke(cli, [*argv, *args], obj={"transport": fake.transport()})


def test_package_upload_from_a_url(fake: FakeVnfm, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg_id = json.loads(run(fake, "--json", "package", "create").stdout)["id"]
    assert run(fake, "package", "upload", pkg_id).exit_code == 2  # neither PATH nor --url
    monkeypatch.setenv("VNFM_PACKAGE_PASSWORD", "repo-PW-7")
    res = run(fake, "package", "upload", pkg_id, "--url", "https://repo/k8s.zip", "--user-name", "nfvo")
    assert res.exit_code == 0, res.output
    assert fake.fetched == [{"addressInformation": "https://repo/k8s.zip", "userName": "nfvo",
                             "password": "repo-PW-7"}]
    assert "repo-PW-7" not in res.output and "ONBOARDED" in res.output


def test_lists_follow_the_servers_pages(fake: FakeVnfm) -> None:
    fake.page_size = 2
    ids = [json.loads(run(fake, "--json", "package", "create").stdout)["id"] for _ in range(5)]
    res = run(fake, "--json", "package", "list")
    assert res.exit_code == 0, res.output
    assert [p["id"] for p in json.loads(res.stdout)] == ids
    assert sum(1 for r in fake.requests if r.method == "GET") == 3  # three pages


def onboarded(fake: FakeVnfm, tmp_path: Path) -> str:
    csar = tmp_path / "pkg.zip"
    with zipfile.ZipFile(csar, "w") as zf:
        zf.writestr("TOSCA-Metadata/TOSCA.meta", "TOSCA-Meta-File-Version: 1.0\n")
    pkg_id = json.loads(run(fake, "--json", "package", "create").stdout)["id"]
    res = run(fake, "package", "upload", pkg_id, str(csar))
    assert res.exit_code == 0, res.output
    return pkg_id


def new_vnf(fake: FakeVnfm) -> str:
    res = run(fake, "vnf", "create", "vnfd-1", "--name", "k8s", "--json")
    assert res.exit_code == 0, res.output
    return str(json.loads(res.stdout)["id"])


def request_file(tmp_path: Path, body: dict[str, Any]) -> str:
    p = tmp_path / "req.json"
    p.write_text(json.dumps(body))
    return str(p)


SEED_REQUEST = {
    "flavourId": "simple",
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "master_node": {"ssh_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "m4ster-pw"},
            "worker_node": {
                "aspect_id": "worker_instance",
                "ssh_cp_name": "workerNode_CP2",
                "username": "ubuntu",
                "password": "w0rker-pw",
            },
        }
    },
}


# ------------------------------------------------------------------ output formats


def test_package_list_table_and_json(fake: FakeVnfm, tmp_path: Path) -> None:
    pkg_id = onboarded(fake, tmp_path)
    res = run(fake, "package", "list")
    assert res.exit_code == 0
    header, rule, row = res.stdout.splitlines()
    assert header.split()[:3] == ["ID", "PRODUCT", "VERSION"]
    assert row.split()[0] == pkg_id
    assert row[header.index("ONBOARDING") :].startswith("ONBOARDED")
    for flag_pos in (["--json", "package", "list"], ["package", "list", "--json"]):
        res = run(fake, *flag_pos)
        assert res.exit_code == 0
        data = json.loads(res.stdout)
        assert data == list(fake.packages.values())


def test_upload_of_a_directory_sends_a_zip(fake: FakeVnfm, tmp_path: Path) -> None:
    d = tmp_path / "pkgdir"
    (d / "TOSCA-Metadata").mkdir(parents=True)
    (d / "TOSCA-Metadata" / "TOSCA.meta").write_text("TOSCA-Meta-File-Version: 1.0\n")
    pkg_id = json.loads(run(fake, "--json", "package", "create").stdout)["id"]
    res = run(fake, "package", "upload", pkg_id, str(d))
    assert res.exit_code == 0, res.output
    assert "ONBOARDED" in res.stdout
    put = [r for r in fake.requests if r.method == "PUT"][0]
    assert put.headers["content-type"] == "application/zip"
    assert put.content.startswith(b"PK")


def test_package_enable_disable_delete_and_vnfd(fake: FakeVnfm, tmp_path: Path) -> None:
    pkg_id = onboarded(fake, tmp_path)
    res = run(fake, "package", "delete", pkg_id)
    assert res.exit_code == 1
    assert f"Error 409 Conflict: package {pkg_id} is ENABLED: disable it first" in res.stderr
    assert run(fake, "package", "disable", pkg_id).stdout.strip() == f"Package {pkg_id} is DISABLED"
    patch = [r for r in fake.requests if r.method == "PATCH"][0]
    assert patch.headers["content-type"] == "application/merge-patch+json"
    assert run(fake, "package", "vnfd", pkg_id).stdout.startswith("tosca_definitions_version")
    assert run(fake, "package", "delete", pkg_id).exit_code == 0
    assert fake.packages == {}


def test_vnf_show_lists_vnfcs_and_masks_secrets(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0, res.output
    res = run(fake, "vnf", "show", vnf_id)
    assert res.exit_code == 0
    assert "VNFCs:" in res.stdout
    assert "masterNode_CP1=10.0.0." in res.stdout
    assert "worker_instance=0" in res.stdout
    for out in (res.stdout, run(fake, "vnf", "show", vnf_id, "--json").stdout):
        assert "m4ster-pw" not in out and "w0rker-pw" not in out
        assert "******" in out
    shown = json.loads(run(fake, "--show-secrets", "vnf", "show", vnf_id, "--json").stdout)
    params = shown["instantiatedVnfInfo"]["additionalParams"]["k8s_cluster_installation_param"]
    assert params["master_node"]["password"] == "m4ster-pw"
    # the request reached the server unchanged (masking is for display only)
    assert fake.bodies("POST", "/instantiate") == [SEED_REQUEST]
    table = run(fake, "vnf", "list").stdout
    assert "INSTANTIATED" in table and " 3 " in table


def test_sim_state_renders_sections(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    res = run(fake, "sim", "state")
    assert res.exit_code == 0
    assert "servers:" in res.stdout and "volumes:" in res.stdout
    assert res.stdout.count("ACTIVE") == 3
    res = run(fake, "sim", "state", vnf_id, "--json")
    assert len(json.loads(res.stdout)["servers"]) == 3


def test_subscription_and_vim_commands(fake: FakeVnfm, tmp_path: Path) -> None:
    flt = tmp_path / "f.json"
    flt.write_text(json.dumps({"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}))
    res = run(fake, "subscription", "create", "http://cb/notify", "--filter-file", str(flt), "--json")
    sub = json.loads(res.stdout)
    assert sub["filter"] == {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}
    assert "http://cb/notify" in run(fake, "subscription", "list").stdout
    assert run(fake, "subscription", "delete", sub["id"]).exit_code == 0
    # --packages: the SOL005 subscriptions, kept apart from the LCM ones
    res = run(fake, "subscription", "create", "http://cb/pkg", "--packages", "--json")
    pkg_sub = json.loads(res.stdout)
    assert fake.requests[-1].url.path == "/vnfpkgm/v1/subscriptions"
    assert "http://cb/pkg" in run(fake, "subscription", "list", "--packages").stdout
    assert "http://cb/pkg" not in run(fake, "subscription", "list").stdout
    assert json.loads(run(fake, "subscription", "show", pkg_sub["id"], "--packages", "--json").stdout) == pkg_sub
    assert run(fake, "subscription", "delete", pkg_sub["id"], "--packages").exit_code == 0
    assert fake.requests[-1].url.path == f"/vnfpkgm/v1/subscriptions/{pkg_sub['id']}"
    assert fake.pkgm_subs == {}

    vim = tmp_path / "vim.json"
    vim.write_text(
        json.dumps(
            {
                "name": "os1",
                "vimType": "openstack",
                "interfaceInfo": {"endpoint": "http://keystone:5000/v3"},
                "accessInfo": {"username": "admin", "password": "adm1n-pw"},
            }
        )
    )
    res = run(fake, "vim", "register", str(vim))
    assert res.exit_code == 0 and "adm1n-pw" not in res.stdout
    lines = run(fake, "vim", "list").stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "TYPE", "DEFAULT", "ENDPOINT"]
    assert "http://keystone:5000/v3" in lines[2]


# ------------------------------------------------------------------ LCM tasks and --wait


def test_instantiate_without_wait_prints_the_occurrence(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST))
    assert res.exit_code == 0
    op_id = next(iter(fake.ops))
    assert f"vnfLcmOpOcc {op_id}" in res.stdout and f"vnfm op show {op_id}" in res.stdout
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--json")
    assert res.exit_code == 1 and "Error 409 Conflict" in res.stderr


def test_wait_prints_state_changes_with_elapsed_time(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0, res.output
    progress = [ln for ln in res.stdout.splitlines() if ln.startswith("  ")]
    assert [ln.split()[0] for ln in progress] == ["STARTING", "PROCESSING", "COMPLETED"]
    assert all(ln.split()[1].endswith("s") for ln in progress)
    float(progress[-1].split()[1][:-1])
    assert "INSTANTIATE COMPLETED" in res.stdout


def test_wait_with_json_keeps_stdout_parseable(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "--json", "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0
    op = json.loads(res.stdout)
    assert op["operationState"] == "COMPLETED"
    assert "PROCESSING" in res.stderr
    assert "m4ster-pw" not in res.stdout


def test_scale_heal_terminate_bodies(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"k8s_cluster_installation_param": {"worker_node": {"password": "x"}}}))
    res = run(
        fake,
        "vnf",
        "scale",
        vnf_id,
        "--type",
        "SCALE_OUT",
        "--aspect-id",
        "worker_instance",
        "--number-of-steps",
        "2",
        "--additional-params-file",
        str(extra),
        "--wait",
    )
    assert res.exit_code == 0, res.output
    assert fake.bodies("POST", "/scale")[0] == {
        "type": "SCALE_OUT",
        "aspectId": "worker_instance",
        "numberOfSteps": 2,
        "additionalParams": {"k8s_cluster_installation_param": {"worker_node": {"password": "x"}}},
    }
    vnfc = fake.instances[vnf_id]["instantiatedVnfInfo"]["vnfcResourceInfo"][-1]["id"]
    assert run(fake, "vnf", "heal", vnf_id, "--vnfc", vnfc, "--cause", "dead", "--wait").exit_code == 0
    assert run(fake, "vnf", "heal", vnf_id, "--wait").exit_code == 0
    assert fake.bodies("POST", "/heal") == [{"vnfcInstanceId": [vnfc], "cause": "dead"}, {}]
    res = run(fake, "vnf", "terminate", vnf_id, "--graceful", "--graceful-timeout", "30", "--wait")
    assert res.exit_code == 0, res.output
    assert fake.bodies("POST", "/terminate") == [
        {"terminationType": "GRACEFUL", "gracefulTerminationTimeout": 30}
    ]
    assert run(fake, "vnf", "delete", vnf_id).exit_code == 0
    assert fake.instances == {}


def test_terminate_defaults_to_forceful(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert run(fake, "vnf", "terminate", vnf_id).exit_code == 0
    assert fake.bodies("POST", "/terminate") == [{"terminationType": "FORCEFUL"}]


def test_wait_failure_prints_error_and_exits_1(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["SCALE"] = {
        "status": 500,
        "title": "Internal Server Error",
        "detail": "server worker-3 failed to build (proxy http://u:pw9@p:1)",
    }
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    res = run(fake, "vnf", "scale", vnf_id, "--type", "SCALE_OUT", "--aspect-id", "worker_instance", "--wait")
    assert res.exit_code == 1
    assert "Error: SCALE FAILED_TEMP" in res.stderr
    assert "server worker-3 failed to build" in res.stderr
    assert "pw9" not in res.output
    op_id = [o for o in fake.ops.values() if o["operation"] == "SCALE"][0]["id"]
    assert f"vnfm op retry {op_id}" in res.stderr

    # op show renders the error; retry --wait follows the occurrence to COMPLETED
    assert "failed to build" in run(fake, "op", "show", op_id).stdout
    assert "FAILED_TEMP" in run(fake, "op", "list").stdout
    res = run(fake, "op", "retry", op_id, "--wait")
    assert res.exit_code == 0, res.output
    states = [ln.split()[0] for ln in res.stdout.splitlines() if ln.startswith("  ")]
    assert states == ["PROCESSING", "COMPLETED"]


def test_rollback_wait_succeeds_on_rolled_back(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["INSTANTIATE"] = {"status": 500, "title": "Internal Server Error", "detail": "boom"}
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 1
    op_id = next(iter(fake.ops))
    res = run(fake, "op", "rollback", op_id, "--wait")
    assert res.exit_code == 0, res.output
    assert "ROLLED_BACK" in res.stdout


def test_op_fail(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["INSTANTIATE"] = {"status": 500, "title": "Internal Server Error", "detail": "boom"}
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST))
    op_id = next(iter(fake.ops))
    for _ in range(3):  # STARTING, PROCESSING, FAILED_TEMP
        run(fake, "op", "show", op_id)
    assert fake.ops[op_id]["operationState"] == "FAILED_TEMP"
    res = run(fake, "op", "fail", op_id, "--json")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["operationState"] == "FAILED"


def test_wait_timeout(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.stuck.add("INSTANTIATE")
    vnf_id = new_vnf(fake)
    res = run(
        fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait", "--timeout", "0.2"
    )
    assert res.exit_code == 1
    assert "gave up waiting" in res.stderr and "PROCESSING" in res.stderr


# ------------------------------------------------------------------ errors


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


def test_bad_request_file_is_explained(fake: FakeVnfm, tmp_path: Path) -> None:
    p = tmp_path / "req.json"
    p.write_text('{\n  "flavourId": "simple", #Set the flavour\n}')
    res = run(fake, "vnf", "instantiate", "vnf-1", str(p))
    assert res.exit_code == 2
    assert "is not valid JSON" in res.output and "line 2" in res.output and "comments" in res.output
    assert fake.requests == []


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


def test_server_command_passes_options_to_serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import types

    monkeypatch.delenv("VNFM_DATABASE_URL", raising=False)
    seen: list[Any] = []
    fake_mod = types.ModuleType("vnfm.entrypoints.api.server")
    fake_mod.serve = seen.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vnfm.entrypoints.api.server", fake_mod)
    res = CliRunner().invoke(
        cli, ["server", "--host", "0.0.0.0", "--port", "9999", "--data-dir", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    (settings,) = seen
    assert (settings.host, settings.port, settings.data_dir) == ("0.0.0.0", 9999, tmp_path)
    assert settings.database_url == f"sqlite:///{tmp_path / 'vnfm.db'}"
    res = CliRunner().invoke(cli, ["server", "--database-url", "sqlite:///x.db"])
    assert seen[-1].database_url == "sqlite:///x.db"


def test_vnfd_of_several_files_needs_a_zip(fake: FakeVnfm, tmp_path: Path) -> None:
    pkg_id = onboarded(fake, tmp_path)
    fake.multi_file_vnfd = True
    res = run(fake, "package", "vnfd", pkg_id)
    assert res.exit_code == 1 and "--zip -o vnfd.zip" in res.output
    out = tmp_path / "vnfd.out"
    res = run(fake, "package", "vnfd", pkg_id, "-o", str(out))  # falls back to the zip
    assert res.exit_code == 0, res.output
    assert out.read_bytes().startswith(b"PK")
    accepts = [r.headers["accept"] for r in fake.requests if r.url.path.endswith("/vnfd")]
    assert accepts == ["text/plain", "text/plain", "application/zip"]


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
