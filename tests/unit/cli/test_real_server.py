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
    # the cluster's nodes next to the VNFCs: each node Ready, on one of the VNFCs listed
    nodes_part = shown.stdout.split("Kubernetes nodes (3/3 Ready):\n")[1].splitlines()
    vnfc_ids = {v["id"] for v in json.loads(run(server_url, "vnf", "show", vnf["id"], "--json").stdout)[
        "instantiatedVnfInfo"]["vnfcResourceInfo"]}
    rows = [ln.split() for ln in nodes_part[2:5]]
    assert sorted(r[1] for r in rows) == ["master", "worker", "worker"] and all(r[2] == "Ready" for r in rows)
    assert {r[-1] for r in rows} == vnfc_ids
    assert '"password": "ubuntu"' not in shown.stdout
    assert run(server_url, "sim", "state", vnf["id"]).exit_code == 0
    res = run(server_url, "vnf", "terminate", vnf["id"], "--wait", "--timeout", "60")
    assert res.exit_code == 0, res.output
    assert run(server_url, "vnf", "delete", vnf["id"]).exit_code == 0


def test_vnf_list_columns_and_output_formats(server_url: str, tmp_path: Path) -> None:
    import yaml

    from vnfm.entrypoints.cli.demo import instantiate_request
    from vnfm.examples import example_package_dir

    pkg = json.loads(run(server_url, "--json", "package", "create").stdout)
    assert run(server_url, "package", "upload", pkg["id"], str(example_package_dir())).exit_code == 0
    pkg = json.loads(run(server_url, "package", "show", pkg["id"], "--json").stdout)
    vnf = json.loads(run(server_url, "vnf", "create", pkg["vnfdId"], "--json").stdout)
    req = tmp_path / "req.json"
    req.write_text(json.dumps(instantiate_request()))
    assert run(server_url, "vnf", "instantiate", vnf["id"], str(req), "--wait", "--timeout", "60").exit_code == 0

    # the table fills VNF STATE, FLAVOUR and VNFCS (instantiatedVnfInfo asked for with `fields`)
    table = run(server_url, "vnf", "list").stdout.splitlines()
    header = table[0].split()
    row = table[2]
    assert "FLAVOUR" in header and "STARTED simple" in " ".join(row.split()[2:5]), table
    # -c picks columns (case-insensitive), -o value prints bare values
    res = run(server_url, "vnf", "list", "-c", "id", "-c", "vnfcs", "-o", "value")
    assert res.exit_code == 0, res.output
    assert res.stdout.split() == [vnf["id"], "3"]
    res = run(server_url, "-o", "yaml", "vnf", "list", "-c", "FLAVOUR")
    assert yaml.safe_load(res.stdout) == [{"FLAVOUR": "simple"}]
    res = run(server_url, "vnf", "show", vnf["id"], "-o", "json", "-c", "instantiationState")
    assert json.loads(res.stdout) == {"instantiationState": "INSTANTIATED"}
    res = run(server_url, "vnf", "show", vnf["id"], "-o", "value", "-c", "id")
    assert res.stdout.strip() == vnf["id"]
    res = run(server_url, "vnf", "list", "-c", "nope")
    assert res.exit_code == 2 and "no column nope" in res.output and "FLAVOUR" in res.output


def test_package_show_is_concise_unless_long(server_url: str) -> None:
    from vnfm.examples import example_package_dir

    pkg = json.loads(run(server_url, "--json", "package", "create").stdout)
    res = run(server_url, "package", "upload", pkg["id"], str(example_package_dir()))
    assert res.exit_code == 0, res.output
    full = json.loads(run(server_url, "package", "show", pkg["id"], "--json").stdout)
    artifacts = full["additionalArtifacts"]
    assert len(artifacts) > 5 and all("checksum" in a for a in artifacts)
    short = run(server_url, "package", "show", pkg["id"]).stdout
    assert len(short.splitlines()) < 25, short
    assert f"{len(artifacts)}: " in short and "--long" in short
    assert all(a["checksum"]["hash"] not in short for a in artifacts)
    assert len(res.stdout.splitlines()) < 30  # upload ends with the same short view
    long = run(server_url, "package", "show", pkg["id"], "--long").stdout
    assert all(a["checksum"]["hash"] in long for a in artifacts)
