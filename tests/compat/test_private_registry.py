"""The private-registry VNF (seed 003) with the stock client: a package shaped like Tacker's
sample (with the registry image file and a volume for the registry's data), instantiate with the
seed's request body as written, a push, heal of the VNFC (images kept), heal of the entire VNF
(the registry starts empty), terminate. The registry is read from GET /sim/v1/state/{id}."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.mgmt.registry_pkg import registry_csar
from tests.unit.mgmt.test_private_registry import PASSWORD, SEED
from vnfm.adapters.infra.simulator.twin import TwinExecutor
from vnfm.adapters.infra.simulator.twin.registry_vnf import push
from vnfm.entrypoints.api.server import ServerHandle

from .conftest import Cli

pytestmark = pytest.mark.slow


def registry(cli: Cli, inst_id: str) -> dict[str, Any]:
    r = cli.http.get(f"/sim/v1/state/{inst_id}")
    assert r.status_code == 200, r.text
    reg: dict[str, Any] = r.json().get("private_registry") or {}
    return reg


def test_private_registry_vnf_with_the_stock_client(cli: Cli, server: ServerHandle, tmp_path: Path) -> None:
    csar = tmp_path / "private_registry.zip"
    csar.write_bytes(registry_csar(volume=True))
    body = tmp_path / "instantiate.json"
    body.write_text(json.dumps(SEED, indent=4))
    pkg_id = cli.json("vnf", "package", "create")["ID"]
    cli.run("vnf", "package", "upload", "--path", str(csar), pkg_id)
    vnfd_id = cli.json("vnf", "package", "show", pkg_id)["VNFD ID"]
    inst_id = cli.json("vnflcm", "create", vnfd_id, "--name", "private-registry")["ID"]

    cli.run("vnflcm", "instantiate", inst_id, str(body))
    cli.wait_new_op(inst_id, set())
    reg = registry(cli, inst_id)
    assert reg["port"] == 5000 and reg["tls"] is False and reg["running"] and reg["data"]["volume_id"]
    show = cli.json("vnflcm", "show", inst_id)
    assert PASSWORD not in json.dumps(show)

    sim = server.server.config.app.state.vnfm.sim  # the simulated cloud of the server's thread
    assert push(TwinExecutor(sim, inst_id), "demo/tiny") == f"{reg['address']}:5000"
    vnfc = show["Instantiated Vnf Info"]["vnfcResourceInfo"][0]["id"]
    n = set(cli.ops_of(inst_id))
    cli.run("vnflcm", "heal", inst_id, "--vnfc-instance", vnfc)
    cli.wait_new_op(inst_id, n)
    assert registry(cli, inst_id)["repositories"] == {"demo/tiny": ["latest"]}

    n = set(cli.ops_of(inst_id))
    cli.run("vnflcm", "heal", inst_id)
    cli.wait_new_op(inst_id, n)
    reg = registry(cli, inst_id)
    assert reg["running"] and reg["repositories"] == {}

    n = set(cli.ops_of(inst_id))
    cli.run("vnflcm", "terminate", inst_id)
    cli.wait_new_op(inst_id, n)
    assert cli.http.get(f"/sim/v1/state/{inst_id}").json().get("private_registry") is None
