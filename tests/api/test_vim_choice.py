"""Issue 21 item 4: which VIM a VNF runs on, as Tacker chooses it (docs/vims.md).

One default VIM at a time (a new default replaces the old one); no vimConnectionInfo: the default
VIM; a named vimId that is not registered, or is of another type: 422 before anything exists,
except that while the simulator is on and no VIM of the named type is registered, the VNF runs on
the simulator, its vimConnectionInfo names the simulator's VIM and the occurrence warns. With the
simulator off (the production configuration) nothing ends on the simulator and /sim/v1 is gone."""

from __future__ import annotations

import socket
import tomllib
from pathlib import Path
from typing import Any

import pytest

from vnfm.config import Settings, SettingsError, load_settings

from .conftest import Api, ApiFactory, seed_body
from .test_packages import assert_problem

ROOT = Path(__file__).resolve().parents[2]
UNREGISTERED = "c3369b54-e376-4423-bb61-afd255900fea"  # the seed's vimId
DEAD_KEYSTONE = "http://127.0.0.1:9/v3"  # nothing listens on the discard port


async def vims(api: Api) -> list[dict[str, Any]]:
    r = await api.c.get("/vnfm/v1/vims")
    assert r.status_code == 200, r.text
    return list(r.json())


async def register(api: Api, name: str, vim_type: str = "openstack", default: bool = False) -> str:
    body: dict[str, Any] = {"name": name, "vimType": vim_type, "isDefault": default,
                            "accessInfo": {"authUrl": DEAD_KEYSTONE, "username": "u", "password": "p"}}
    r = await api.c.post("/vnfm/v1/vims", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def resource_handles(inst: dict[str, Any]) -> list[dict[str, Any]]:
    info = inst["instantiatedVnfInfo"]
    return ([v["computeResource"] for v in info["vnfcResourceInfo"]]
            + [s["storageResource"] for s in info["virtualStorageResourceInfo"]]
            + [vl["networkResource"] for vl in info["vnfVirtualLinkResourceInfo"]]
            + [e["resourceHandle"] for e in info["extVirtualLinkInfo"]])


async def no_occurrences(api: Api) -> bool:
    return (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == []


async def test_without_vim_connection_info_the_default_vim(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    [sim] = await vims(api)
    assert sim["vimType"] == "simulator" and sim["isDefault"] is True
    inst_id = await api.instantiated(vnfd_id, seed_body(ext_vls=False, vimConnectionInfo=[]))
    inst = await api.instance(inst_id)
    own = [c for c in inst["vimConnectionInfo"] if c["vimType"] != "kubernetes"]
    assert own == [{"id": sim["id"], "vimId": sim["id"], "vimType": "simulator"}]
    handles = resource_handles(inst)
    assert handles and {h["vimConnectionId"] for h in handles} == {sim["id"]}


async def test_a_second_default_replaces_the_first(api: Api) -> None:
    [sim] = await vims(api)
    first = await register(api, "os-1", default=True)
    shown = {v["id"]: v["isDefault"] for v in await vims(api)}
    assert shown == {sim["id"]: False, first: True}
    # Tacker's API too (openstack vim register --is-default)
    r = await api.c.post("/v1.0/vims.json", json={"vim": {
        "name": "os-2", "type": "openstack", "auth_url": DEAD_KEYSTONE, "is_default": True,
        "auth_cred": {"username": "u", "password": "p"}, "vim_project": {"name": "p"}}})
    assert r.status_code == 201, r.text
    second = r.json()["vim"]["id"]
    shown = {v["id"]: v["isDefault"] for v in await vims(api)}
    assert shown == {sim["id"]: False, first: False, second: True}
    # ... and `openstack vim set --is-default` (PUT) moves it back
    r = await api.c.put(f"/v1.0/vims/{first}.json", json={"vim": {"is_default": True}})
    assert r.status_code == 200, r.text
    assert [v["id"] for v in await vims(api) if v["isDefault"]] == [first]


async def test_unregistered_vim_id_runs_on_the_simulator_with_a_warning(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    [sim] = await vims(api)
    inst_id = await api.create_instance(vnfd_id)
    occ = await api.run(inst_id, "instantiate", seed_body())  # the seed's request, unchanged
    inst = await api.instance(inst_id)
    own = [c for c in inst["vimConnectionInfo"] if c["vimType"] != "kubernetes"]
    assert own == [{"id": "daa80cf2-9b73-4806-8176-56cd6fab8cea", "vimId": sim["id"], "vimType": "simulator"}]
    assert {h["vimConnectionId"] for h in resource_handles(inst)} == {"daa80cf2-9b73-4806-8176-56cd6fab8cea"}
    shown = (await api.c.get(f"/vnflcm/v1/vnf_lcm_op_occs/{occ['id']}")).json()
    [warning] = [w for w in shown["vnfmWarnings"] if UNREGISTERED in w]  # (others: keys not acted on)
    assert "not used" in warning and sim["id"] in warning


async def test_unregistered_or_mistyped_vim_id_is_422_once_a_vim_of_the_type_exists(
        onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    os_id = await register(api, "os-1")
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body())
    assert_problem(r, 422, "daa80cf2-9b73-4806-8176-56cd6fab8cea", f"openstack VIM {UNREGISTERED} is not registered")
    [sim] = [v for v in await vims(api) if v["vimType"] == "simulator"]
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body(vimConnectionInfo=[
        {"id": "c1", "vimId": sim["id"], "vimType": "openstack"}]))
    assert_problem(r, 422, f"VIM {sim['id']} is a simulator VIM, not openstack")
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body(vimConnectionInfo=[
        {"id": "c1", "vimId": os_id, "vimType": "kubernetes"}]))
    assert_problem(r, 422, f"VIM {os_id} is a openstack VIM, not kubernetes")
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body(vimConnectionInfo=[
        {"id": "c1", "vimId": os_id, "vimType": "openstack"},
        {"id": "c2", "vimId": sim["id"], "vimType": "simulator"}]))
    assert_problem(r, 422, "runs on one VIM")
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body(vimConnectionInfo=[
        {"id": "c1", "vimId": os_id, "vimType": "openstack", "accessInfo": {"password": "x"}}]))
    assert_problem(r, 422, "accessInfo of an OpenStack VIM cannot be given here")
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body(vimConnectionInfo=[
        {"id": "c1", "vimId": os_id, "vimType": "openstack"}], extVirtualLinks=[
        {"id": "e1", "resourceId": "net", "vimConnectionId": "nope", "extCps": []}]))
    assert_problem(r, 422, "vimConnectionId 'nope' is not the id of an entry of vimConnectionInfo")
    assert await no_occurrences(api)
    assert (await api.instance(inst_id))["instantiationState"] == "NOT_INSTANTIATED"


async def test_the_vim_an_instance_runs_on_cannot_be_patched_away(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.instantiated(vnfd_id)
    conn_id = "daa80cf2-9b73-4806-8176-56cd6fab8cea"
    r = await api.c.patch(f"/vnflcm/v1/vnf_instances/{inst_id}", json={"vimConnectionInfo": [
        {"id": conn_id, "vimId": UNREGISTERED, "vimType": "openstack"}]})
    assert_problem(r, 422, f"vimConnectionInfo '{conn_id}': its vimId cannot change")


async def test_simulator_off_nothing_ends_on_the_simulator(api_factory: ApiFactory) -> None:
    api = await api_factory(simulator=False, fault_injection=False, sim_kube_api_port=free_port())
    assert api.core.extras["kube_api"]._httpd is None  # no simulated Kubernetes API listens either
    assert await vims(api) == []  # the simulator is no VIM
    for path in ("/sim/v1/state", "/sim/v1/state/x"):
        assert (await api.c.get(path)).status_code == 404
    assert (await api.c.post("/sim/v1/faults", json={"fail_delete": 1})).status_code == 404
    r = await api.c.post("/vnfm/v1/vims", json={"name": "s", "vimType": "simulator"})
    assert_problem(r, 422, "simulated cloud is off")
    _, vnfd_id = await api.onboard()
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body(vimConnectionInfo=[]))
    assert_problem(r, 422, "no default VIM is registered")
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body())
    assert_problem(r, 422, f"openstack VIM {UNREGISTERED} is not registered")
    os_id = await register(api, "os-default", default=True)
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body())
    assert_problem(r, 422, f"openstack VIM {UNREGISTERED} is not registered")  # still: never the simulator
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=seed_body(vimConnectionInfo=[
        {"id": "c1", "vimType": "simulator"}]))
    assert_problem(r, 422)
    assert await no_occurrences(api)
    # Without vimConnectionInfo: the OpenStack default (nothing answers there: the operation fails).
    loc = await api.task(inst_id, "instantiate", seed_body(ext_vls=False, vimConnectionInfo=[]))
    inst = await api.instance(inst_id)
    assert inst["vimConnectionInfo"] == [{"id": os_id, "vimId": os_id, "vimType": "openstack"}]
    assert api.core.instances.get(inst_id).vim_id == os_id
    occ = await api.wait_op(loc, timeout=60)
    assert occ["operationState"] == "FAILED_TEMP"
    assert api.core.sim.snapshot()["servers"] == []  # nothing was built on the simulator


def test_fault_injection_needs_the_simulator() -> None:
    with pytest.raises(SettingsError, match="fault_injection needs the simulator"):
        load_settings(simulator=False, fault_injection=True)


def test_the_simulator_is_on_by_default_and_off_in_the_shipped_configuration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VNFM_SIMULATOR", raising=False)
    assert Settings().simulator is True
    assert tomllib.loads((ROOT / "deploy" / "vnfm.toml").read_text())["simulator"] is False
    assert "VNFM_SIMULATOR=0" in (ROOT / "Containerfile").read_text()
    assert "Environment=VNFM_SIMULATOR=0" in (ROOT / "deploy" / "systemd" / "vnfm.service").read_text()
