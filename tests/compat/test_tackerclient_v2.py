"""The stock client's v2 mode (`openstack --os-tacker-api-version 2 vnflcm ...`: /vnflcm/v2,
`Version: 2.0.0`) against a running vnfm: create, instantiate, scale, heal, op list/show,
retry, rollback, fail, change-vnfpkg, terminate, delete, as a user would run them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vnfm.config import Settings
from vnfm.entrypoints.api.server import ServerHandle, start_in_thread
from vnfm.examples import example_csar, example_csar_version

from .conftest import Cli
from .test_tackerclient import INSTANTIATE, MASTER_PW

pytestmark = pytest.mark.slow

V2 = ("--os-tacker-api-version", "2")
# The seed's request as v3.3.1 writes it: vimConnectionInfo is a map keyed by the connection id.
INSTANTIATE_V2 = {**INSTANTIATE, "vimConnectionInfo": {
    c["id"]: {k: v for k, v in c.items() if k != "id"} for c in INSTANTIATE["vimConnectionInfo"]}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """conftest's server, with the simulator's fault injection (a failed operation to retry)."""
    handle = start_in_thread(Settings(data_dir=tmp_path_factory.mktemp("vnfm-compat-v2"), port=0,
                                      probe_callbacks=False, sim_boot_time=0, sim_step_time=0, auth_token="",
                                      page_size=2, fault_injection=True))
    try:
        yield handle
    finally:
        handle.stop()


def _onboard(cli: Cli) -> str:
    pkg_id = cli.http.post("/vnfpkgm/v1/vnf_packages", json={}).json()["id"]
    r = cli.http.put(f"/vnfpkgm/v1/vnf_packages/{pkg_id}/package_content", content=example_csar(),
                     headers={"Content-Type": "application/zip"})
    assert r.status_code == 202, r.text
    return str(cli.http.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}").json()["vnfdId"])


def _accepted(cli: Cli, *args: str) -> None:
    out = cli.run(*V2, *args).stdout
    assert "accepted" in out.lower(), out


def _vnfcs(show: dict[str, Any]) -> list[dict[str, Any]]:
    return list(show["Instantiated Vnf Info"]["vnfcResourceInfo"])


@pytest.fixture(scope="module")
def vnfd_id(cli: Cli) -> str:
    return _onboard(cli)


def test_lifecycle_with_the_stock_client_v2(cli: Cli, vnfd_id: str, tmp_path: Path) -> None:
    inst_file = tmp_path / "instantiate_v2.json"
    inst_file.write_text(json.dumps(INSTANTIATE_V2))
    versions = cli.json(*V2, "vnflcm", "versions")
    assert {"version": "2.0.0", "isDeprecated": False} in versions["apiVersions"]

    inst = cli.json(*V2, "vnflcm", "create", vnfd_id, "--name", "compat-v2")
    inst_id = inst["ID"]
    assert inst["Instantiation State"] == "NOT_INSTANTIATED" and "VNF Package ID" not in inst

    _accepted(cli, "vnflcm", "instantiate", inst_id, str(inst_file))
    cli.wait_new_op(inst_id, set())
    show = cli.json(*V2, "vnflcm", "show", inst_id)
    assert show["Instantiation State"] == "INSTANTIATED" and "VNF Package ID" not in show
    assert "daa80cf2-9b73-4806-8176-56cd6fab8cea" in show["VIM Connection Info"]  # v3.3.1's map
    assert MASTER_PW not in json.dumps(show)

    n = set(cli.ops_of(inst_id))
    _accepted(cli, "vnflcm", "scale", "--type", "SCALE_OUT", "--aspect-id", "worker_instance",
              "--number-of-steps", "1", inst_id)
    cli.wait_new_op(inst_id, n)

    show = cli.json(*V2, "vnflcm", "show", inst_id)
    worker = next(v for v in _vnfcs(show) if v["vduId"] == "workerNode")
    vnfc_infos = show["Instantiated Vnf Info"]["vnfcInfo"]
    info_id = next(i["id"] for i in vnfc_infos if i["vnfcResourceInfoId"] == worker["id"])
    n = set(cli.ops_of(inst_id))
    _accepted(cli, "vnflcm", "heal", inst_id, "--vnfc-instance", info_id)
    healed = cli.wait_new_op(inst_id, n)

    ops, op = cli.many((*V2, "vnflcm", "op", "list"), (*V2, "vnflcm", "op", "show", healed["id"]))
    assert sorted(o["Operation"] for o in ops if o["VNF Instance ID"] == inst_id) == ["HEAL", "INSTANTIATE", "SCALE"]
    assert op["Operation"] == "HEAL" and op["Operation State"] == "COMPLETED"
    assert op["Operation Parameters"]["vnfcInstanceId"] == [worker["id"]]  # the VnfcInfo id, mapped
    assert op["Links"]["self"]["href"].endswith(f"/vnflcm/v2/vnf_lcm_op_occs/{healed['id']}")

    n = set(cli.ops_of(inst_id))
    _accepted(cli, "vnflcm", "terminate", inst_id)
    cli.wait_new_op(inst_id, n)
    out = cli.run(*V2, "vnflcm", "delete", inst_id).stdout
    assert "deleted" in out.lower(), out


def _failed_temp(cli: Cli, vnfd_id: str, inst_file: Path) -> tuple[str, str]:
    assert cli.http.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}}).status_code == 204
    inst_id = cli.json(*V2, "vnflcm", "create", vnfd_id)["ID"]
    _accepted(cli, "vnflcm", "instantiate", inst_id, str(inst_file))
    op = _wait_state(cli, inst_id, "FAILED_TEMP")
    return inst_id, op


def _wait_state(cli: Cli, inst_id: str, state: str) -> str:
    deadline = time.monotonic() + 30
    while True:
        ops = [o for o in cli.ops_of(inst_id).values() if o["operationState"] == state]
        if ops:
            return str(ops[0]["id"])
        assert time.monotonic() < deadline, cli.ops_of(inst_id)
        time.sleep(0.02)


def test_retry_rollback_fail_with_the_stock_client_v2(cli: Cli, vnfd_id: str, tmp_path: Path) -> None:
    inst_file = tmp_path / "instantiate_v2.json"
    inst_file.write_text(json.dumps(INSTANTIATE_V2))
    first, op1 = _failed_temp(cli, vnfd_id, inst_file)
    second, op2 = _failed_temp(cli, vnfd_id, inst_file)
    third, op3 = _failed_temp(cli, vnfd_id, inst_file)

    _accepted(cli, "vnflcm", "op", "retry", op1)
    _wait_state(cli, first, "COMPLETED")
    _accepted(cli, "vnflcm", "op", "rollback", op2)
    _wait_state(cli, second, "ROLLED_BACK")
    failed = cli.json(*V2, "vnflcm", "op", "fail", op3)
    assert failed["Operation State"] == "FAILED"
    again = cli.run(*V2, "vnflcm", "op", "retry", op3, check=False)
    assert again.returncode != 0 and "FAILED" in again.stdout + again.stderr
    states = cli.many((*V2, "vnflcm", "show", first), (*V2, "vnflcm", "show", second))
    assert [s["Instantiation State"] for s in states] == ["INSTANTIATED", "NOT_INSTANTIATED"]


def test_change_vnfpkg_with_the_stock_client_v2(cli: Cli, vnfd_id: str, tmp_path: Path) -> None:
    """A Kubernetes upgrade (README "Kubernetes upgrades") driven by `openstack vnflcm change-vnfpkg`."""
    inst_id = cli.http.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id}).json()["id"]
    assert cli.http.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=INSTANTIATE).status_code == 202
    cli.wait_new_op(inst_id, set())
    pkg_id = cli.http.post("/vnfpkgm/v1/vnf_packages", json={}).json()["id"]
    newer = "5f2a9c1e-7b3d-4e8a-9c6f-0000000000c1"
    r = cli.http.put(f"/vnfpkgm/v1/vnf_packages/{pkg_id}/package_content",
                     content=example_csar_version("1.1", newer), headers={"Content-Type": "application/zip"})
    assert r.status_code == 202, r.text
    change = tmp_path / "change_vnfpkg.json"
    change.write_text(json.dumps({"vnfdId": newer, "additionalParams": {
        "k8s_cluster_installation_param": {"kubernetes_version": "1.31.2"}}}))
    n = set(cli.ops_of(inst_id))
    _accepted(cli, "vnflcm", "change-vnfpkg", inst_id, str(change))
    op = cli.wait_new_op(inst_id, n)
    assert op["operation"] == "CHANGE_VNFPKG"
    assert cli.json(*V2, "vnflcm", "show", inst_id)["VNFD ID"] == newer
