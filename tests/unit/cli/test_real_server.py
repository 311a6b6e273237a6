"""The CLI against the real API server, started in this process on a free port."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from vnfm.entrypoints.cli.main import cli


def run(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--endpoint", url, *args])


def test_lists_and_errors_against_the_real_server(server_url: str) -> None:
    res = run(server_url, "vnf", "list", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == []
    res = run(server_url, "package", "list")
    assert res.exit_code == 0 and res.stdout.strip() == "(none)"
    res = run(server_url, "vnf", "show", "00000000-0000-0000-0000-000000000000")
    assert res.exit_code == 1
    assert res.stderr.startswith("Error 404 Not Found: ")


def test_package_upload_and_lifecycle_with_wait(server_url: str, tmp_path: Path) -> None:
    from vnfm.examples import example_package_dir

    pkg = json.loads(run(server_url, "--json", "package", "create").stdout)
    res = run(server_url, "package", "upload", pkg["id"], str(example_package_dir()))
    assert res.exit_code == 0, res.output
    pkg = json.loads(run(server_url, "package", "show", pkg["id"], "--json").stdout)
    assert pkg["onboardingState"] == "ONBOARDED"
    vnf = json.loads(run(server_url, "vnf", "create", pkg["vnfdId"], "--json").stdout)
    from vnfm.entrypoints.cli.demo import instantiate_request

    req = tmp_path / "req.json"
    req.write_text(json.dumps(instantiate_request()))
    res = run(server_url, "vnf", "instantiate", vnf["id"], str(req), "--wait", "--timeout", "60")
    assert res.exit_code == 0, res.output
    assert "COMPLETED" in res.stdout
    # the server's progress lines, live: the stack the simulated cloud created, its servers
    progress = [ln for ln in res.stdout.splitlines() if ln.startswith("    ")]
    assert any("deploying" in ln for ln in progress) and any("server" in ln for ln in progress), res.stdout
    shown = run(server_url, "vnf", "show", vnf["id"])
    assert shown.exit_code == 0, shown.output
    assert "VNFCs:" in shown.stdout
    assert '"password": "ubuntu"' not in shown.stdout
    assert run(server_url, "sim", "state", vnf["id"]).exit_code == 0
    res = run(server_url, "vnf", "terminate", vnf["id"], "--wait", "--timeout", "60")
    assert res.exit_code == 0, res.output
    assert run(server_url, "vnf", "delete", vnf["id"]).exit_code == 0
