"""The private-registry VNF driver (seed 003) on the simulated cloud and its twin: instantiate,
push then heal (data kept on a volume, lost on the VM's disk), heal entire, terminate, the
request-time validation, failures with the step, and the SSH password kept out of everything."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.mgmt.registry_pkg import CERT_PATH, IMAGE_PATH, KEY_PATH, registry_csar
from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.infra.simulator.twin import TwinConfig, TwinExecutor, instance_state
from vnfm.adapters.infra.simulator.twin.registry_vnf import push
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.domain.errors import VnfmError
from vnfm.domain.model import OpOcc, OpState

PASSWORD = "Ubuntu-s3cret-pw"
R = "private_registry_installation_param"
# seed 003's instantiate request body, as written (the VIM id is unknown here: the default VIM)
SEED: dict[str, Any] = {
    "flavourId": "simple",
    "extVirtualLinks": [{"id": "net0", "resourceId": "f0c82461-36b5-4d86-8322-b0bc19cda65f",
                         "extCps": [{"cpdId": "CP1", "cpConfig": [
                             {"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET"}]}]}]}],
    "additionalParams": {R: {"ssh_cp_name": "CP1", "ssh_username": "ubuntu", "ssh_password": PASSWORD,
                             "image_path": IMAGE_PATH}},
    "vimConnectionInfo": [{"id": "8a3adb69-0784-43c7-833e-aab0b6ab4470",
                           "vimId": "8d8373fe-6977-49ff-83ac-7756572ed186", "vimType": "openstack"}],
}


def body(**param_changes: Any) -> dict[str, Any]:
    b = copy.deepcopy(SEED)
    p = b["additionalParams"][R]
    for k, v in param_changes.items():
        if v is None:
            p.pop(k, None)
        else:
            p[k] = v
    return b


class Reg:
    def __init__(self, app: App) -> None:
        self.app = app
        self.vnfd: dict[bool, str] = {}

    def onboard(self, volume: bool) -> str:
        if volume not in self.vnfd:
            pkg = self.app.packages.create({})
            pkg = self.app.packages.upload(pkg.id, registry_csar(volume=volume))
            self.vnfd[volume] = str(pkg.vnfd_id)
        return self.vnfd[volume]

    async def wait(self, occ: OpOcc, timeout: float = 20.0) -> OpOcc:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            cur = self.app.instances.op_get(occ.id)
            if cur.operation_state in (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK,
                                       OpState.FAILED_TEMP) and occ.id not in self.app.engine.running:
                return cur
            if loop.time() > deadline:
                raise TimeoutError(f"{occ.id} still {cur.operation_state}")
            await asyncio.sleep(0.005)

    async def instantiate(self, req: dict[str, Any] | None = None, *, volume: bool = False,
                          ok: bool = True) -> tuple[str, OpOcc]:
        inst = self.app.instances.create({"vnfdId": self.onboard(volume)})
        occ = await self.wait(self.app.instances.instantiate(inst.id, req or body()))
        if ok:
            assert occ.operation_state == OpState.COMPLETED, occ.error
        return inst.id, occ

    async def done(self, occ: OpOcc) -> OpOcc:
        occ = await self.wait(occ)
        assert occ.operation_state == OpState.COMPLETED, occ.error
        return occ

    def state(self, inst_id: str) -> dict[str, Any]:
        st = instance_state(self.app.sim, inst_id) or {}
        reg: dict[str, Any] = st.get("private_registry") or {}
        return reg

    def vnfc(self, inst_id: str) -> str:
        return str(self.app.instances.get(inst_id).resources.vnfcs[0].id)

    def push(self, inst_id: str, repo: str) -> str:
        return push(TwinExecutor(self.app.sim, inst_id), repo)

    def faults(self, inst_id: str, **faults: Any) -> None:
        TwinExecutor(self.app.sim, inst_id).set_faults(**faults)


@pytest.fixture
async def reg(tmp_path: Path) -> AsyncIterator[Reg]:
    settings = Settings(data_dir=tmp_path, probe_callbacks=False, orphan_after=5)
    sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0))
    app = build(settings, sim=sim, notifier=None, twin=TwinConfig(poll=0.002))
    await app.start()
    try:
        yield Reg(app)
    finally:
        await app.stop()


async def test_instantiate_with_the_seed_body_runs_the_registry_from_the_package_image(reg: Reg) -> None:
    inst_id, occ = await reg.instantiate()
    r = reg.state(inst_id)
    vnfc = reg.app.instances.get(inst_id).resources.vnfcs[0]
    ip = vnfc.address("CP1", floating_first=False)
    assert r["address"] == ip and r["port"] == 5000 and r["tls"] is False and r["running"]
    assert r["url"] == f"http://{ip}:5000" and r["repositories"] == {}
    assert r["data"] == {"dir": "/var/lib/vnfm-private-registry", "volume_id": None}
    assert r["docker_images"] == ["registry:latest"]
    dump = json.dumps([instance_state(reg.app.sim, inst_id), reg.app.sim.extras(inst_id), occ.error])
    assert PASSWORD not in dump


async def test_without_image_path_the_image_is_pulled_and_port_no_is_honoured(reg: Reg) -> None:
    inst_id, _ = await reg.instantiate(body(image_path=None, port_no=5443))
    r = reg.state(inst_id)
    assert r["port"] == 5443 and r["url"].endswith(":5443")


async def test_tls_from_the_package_serves_https(reg: Reg) -> None:
    inst_id, _ = await reg.instantiate(body(cert_path=CERT_PATH, key_path=KEY_PATH))
    r = reg.state(inst_id)
    assert r["tls"] is True and r["url"].startswith("https://")


async def test_push_then_heal_the_vnfc_keeps_images_on_the_kept_volume(reg: Reg) -> None:
    inst_id, _ = await reg.instantiate(volume=True)
    r = reg.state(inst_id)
    assert r["data"]["volume_id"]
    reg.push(inst_id, "demo/tiny")
    assert reg.state(inst_id)["repositories"] == {"demo/tiny": ["latest"]}
    old_server = reg.app.instances.get(inst_id).resources.vnfcs[0].server_id
    occ = await reg.done(reg.app.instances.heal(inst_id, {"vnfcInstanceId": [reg.vnfc(inst_id)]}))
    assert reg.app.instances.get(inst_id).resources.vnfcs[0].server_id != old_server
    after = reg.state(inst_id)
    assert after["repositories"] == {"demo/tiny": ["latest"]} and after["running"]
    assert after["data"]["volume_id"] == r["data"]["volume_id"]
    assert "data volume was kept" in _progress(reg, occ)


async def test_heal_of_the_vnfc_with_data_on_the_disk_says_the_registry_starts_empty(reg: Reg) -> None:
    inst_id, _ = await reg.instantiate()
    reg.push(inst_id, "demo/tiny")
    occ = await reg.done(reg.app.instances.heal(inst_id, {"vnfcInstanceId": [reg.vnfc(inst_id)]}))
    assert reg.state(inst_id)["repositories"] == {}
    assert "the registry starts empty (its data was on the VM's disk" in _progress(reg, occ)


async def test_heal_of_the_vnfc_that_deletes_its_volume_says_the_registry_starts_empty(reg: Reg) -> None:
    inst_id, _ = await reg.instantiate(volume=True)
    old_volume = reg.state(inst_id)["data"]["volume_id"]
    reg.push(inst_id, "demo/tiny")
    occ = await reg.done(reg.app.instances.heal(inst_id, {"vnfcInstanceId": [reg.vnfc(inst_id)],
                                                          "additionalParams": {"all": True}}))
    after = reg.state(inst_id)
    assert after["repositories"] == {} and after["data"]["volume_id"] != old_volume
    assert "the registry starts empty (its data volume was re-created" in _progress(reg, occ)


async def test_heal_entire_rebuilds_the_registry_empty(reg: Reg) -> None:
    inst_id, _ = await reg.instantiate(volume=True)
    reg.push(inst_id, "demo/tiny")
    occ = await reg.done(reg.app.instances.heal(inst_id, {}))
    r = reg.state(inst_id)
    assert r["running"] and r["repositories"] == {}
    assert "the entire VNF was re-created" in _progress(reg, occ)


async def test_terminate_leaves_no_registry(reg: Reg) -> None:
    inst_id, _ = await reg.instantiate()
    await reg.done(reg.app.instances.terminate(inst_id, {"terminationType": "FORCEFUL"}))
    assert reg.state(inst_id) == {}
    assert reg.app.instances.get(inst_id).instantiation_state == "NOT_INSTANTIATED"


A = f"additionalParams.{R}"


@pytest.mark.parametrize(("changes", "message", "status"), [
    ({"ssh_password": None}, f"{A}.ssh_password: is required", 400),
    ({"ssh_username": ""}, f"{A}.ssh_username: must not be empty", 400),
    ({"ssh_cp_name": None}, f"{A}.ssh_cp_name: is required", 400),
    ({"ssh_cp_name": "CP9"}, f"{R}.ssh_cp_name: 'CP9' is not a CP of flavour 'simple'", 422),
    ({"image_path": "Files/images/missing.tar"}, f"{R}.image_path: 'Files/images/missing.tar' is not a file", 422),
    ({"image_path": "../../etc/passwd"}, f"{A}.image_path: '../../etc/passwd' must be a relative path inside", 400),
    ({"port_no": 0}, f"{A}.port_no: must be at least 1", 400),
    ({"port_no": 65536}, f"{A}.port_no: must be at most 65535", 400),
    ({"port_no": "http"}, f"{A}.port_no: must be an integer, got str", 400),
    ({"cert_path": CERT_PATH}, f"{A}.key_path: is required with cert_path", 400),
    ({"proxy": {"http_proxy": f"ftp://u:{PASSWORD}@p:21"}}, f"{A}.proxy.http_proxy: must be an http:// or https://",
     400),
    ({"proxy": {"https_proxy": 3128}}, f"{A}.proxy.https_proxy: must be a string", 400),
    ({"proxy": {"no_proxy": "a;b"}}, f"{A}.proxy.no_proxy: 'a;b' is not a host, domain or network", 400),
    ({"port": 5001}, f"{A}.port: not a known key (did you mean 'port_no'?)", 400),
    ({"proxy": {"ftp_proxy": "http://p:3128"}}, f"{A}.proxy.ftp_proxy: not a known key", 400),
    ({"data_dir": "/etc"}, f"{A}.data_dir: '/etc' is a system directory", 400),
])
async def test_request_time_validation_names_the_key(reg: Reg, changes: dict[str, Any], message: str,
                                                     status: int) -> None:
    inst = reg.app.instances.create({"vnfdId": reg.onboard(False)})
    with pytest.raises(VnfmError) as e:
        reg.app.instances.instantiate(inst.id, body(**changes))
    assert message in e.value.detail, e.value.detail
    assert e.value.status == status
    assert PASSWORD not in e.value.detail
    assert reg.app.instances.get(inst.id).instantiation_state == "NOT_INSTANTIATED"


@pytest.mark.parametrize(("fault", "step", "tail"), [
    ("docker_fails", "docker-install", "Docker did not start within"),
    ("unsupported_os", "docker-install", "unsupported OS"),
    ("image_load_fails", "docker-load-image", "docker load failed"),
])
async def test_a_failing_step_ends_failed_temp_with_the_step_and_its_output(reg: Reg, fault: str, step: str,
                                                                           tail: str) -> None:
    inst = reg.app.instances.create({"vnfdId": reg.onboard(False)})
    reg.faults(inst.id, **{fault: True})
    occ = await reg.wait(reg.app.instances.instantiate(inst.id, body()))
    assert occ.operation_state == OpState.FAILED_TEMP
    detail = json.dumps(occ.error)
    assert step in detail and tail in detail
    assert PASSWORD not in detail


async def test_a_retry_after_the_fault_is_gone_completes(reg: Reg) -> None:
    inst = reg.app.instances.create({"vnfdId": reg.onboard(False)})
    reg.faults(inst.id, docker_fails=True)
    occ = await reg.wait(reg.app.instances.instantiate(inst.id, body()))
    assert occ.operation_state == OpState.FAILED_TEMP
    reg.faults(inst.id, docker_fails=False)
    await reg.done(reg.app.instances.retry(occ.id))
    assert reg.state(inst.id)["running"]


def _progress(reg: Reg, occ: OpOcc) -> str:
    return json.dumps(reg.app.instances.op_get(occ.id).__dict__, default=str)
