"""The OpenStack demo scenario (demo/openstack.py) against the fake server, with a stand-in for the
OpenStack SDK (no cloud here): what Nova and Neutron would say is derived from the fake's instances.
The live run is `vnfm demo --vim openstack` on ci/openstack's cloud."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from tests.unit.cli.cli_fake import BASE, FakeVnfm, tiny_csar
from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.demo.openstack import OpenStackDemo

OPENRC = {
    "OS_AUTH_URL": "http://keystone:5000/v3",
    "OS_USERNAME": "admin",
    "OS_PASSWORD": "0s-s3cret",
    "OS_PROJECT_NAME": "demo",
}


class StandInCloud:
    """Stands in for SdkCloud: the network vnfm-ci-net exists, every image does, a server is
    ACTIVE while the fake's instance reports it, its ports are the reported ones."""

    def __init__(self, fake: FakeVnfm) -> None:
        self.fake = fake
        self.missing: set[str] = set()  # servers Nova does not know
        self.conn = SimpleNamespace(network=SimpleNamespace(find_network=self._find_network))
        self.closed = False

    def _vnfcs(self) -> Iterator[dict[str, Any]]:
        for inst in self.fake.instances.values():
            yield from (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []

    def _find_network(self, name: str) -> Any:
        return SimpleNamespace(id="net-1") if name == "vnfm-ci-net" else None

    def find_image(self, name: str) -> dict[str, Any]:
        return {"name": name}

    def get_server(self, sid: str) -> dict[str, Any] | None:
        known = any(v["computeResource"]["resourceId"] == sid for v in self._vnfcs())
        return {"id": sid, "status": "ACTIVE"} if known and sid not in self.missing else None

    def server_ports(self, sid: str) -> list[dict[str, Any]]:
        return [
            {"id": str(cp.get("vnfLinkPortId")),
             "fixed_ips": [{"ip_address": a} for pr in cp["cpProtocolInfo"]
                           for ip in pr["ipOverEthernet"]["ipAddresses"] for a in ip["addresses"]]}
            for v in self._vnfcs() if v["computeResource"]["resourceId"] == sid
            for cp in v["vnfcCpInfo"]
        ]

    def find_stack(self, name: str) -> dict[str, Any] | None:
        live = [i for i in self.fake.instances.values() if f"vnf-{i['id']}" == name and i.get("instantiatedVnfInfo")]
        return {"stack_name": name, "stack_status": "CREATE_COMPLETE"} if live else None

    def close(self) -> None:
        self.closed = True


def drive(fake: FakeVnfm, cloud: StandInCloud) -> tuple[bool, str, OpenStackDemo]:
    lines: list[str] = []
    with VnfmClient(BASE, transport=fake.transport()) as client:
        demo = OpenStackDemo(client, lines.append, openrc=OPENRC, image="vnfm-ci-image", timeout=30)
        demo._cloud = cloud
        try:
            ok = demo.run(tiny_csar())
        finally:
            demo.close()
    return ok, "\n".join(lines), demo


def test_openstack_demo_against_a_stand_in_cloud() -> None:
    fake = FakeVnfm()
    cloud = StandInCloud(fake)
    ok, out, demo = drive(fake, cloud)
    assert ok, out
    names = [r.name for r in demo.state.results]
    assert names[0] == "register the OpenStack cloud as a VIM" and names[-1] == "deregister the VIM"
    assert len(names) == 11 and "heal one worker VNFC" in names
    body = fake.bodies("POST", "/instantiate")[0]
    vim_id = body["vimConnectionInfo"][0]["vimId"]
    assert body["vimConnectionInfo"] == [{"id": "demo-vim-connection", "vimId": vim_id, "vimType": "openstack"}]
    assert [(v["resourceId"], v["extCps"][0]["cpdId"]) for v in body["extVirtualLinks"]] == [
        ("net-1", "masterNode_CP1"), ("net-1", "workerNode_CP2")]
    assert body["additionalParams"]["nfv"]["VDU"]["workerNode"] == {"image": "vnfm-ci-image"}
    assert "3 server(s) ACTIVE in Nova with the reported ports" in out
    assert "4 server(s) ACTIVE in Nova" in out  # after scale out
    assert "no stack left in Heat" in out
    final = next(ln for ln in out.splitlines() if ln.startswith("Final state:"))
    assert "gone (404)" in final and "Heat stack: none" in final
    assert fake.vims == {} and cloud.closed
    assert "0s-s3cret" not in out


def test_openstack_demo_fails_when_nova_disagrees_stand_in_cloud() -> None:
    fake = FakeVnfm()
    cloud = StandInCloud(fake)
    cloud.missing.add("server-5")  # the first worker of the instantiate
    ok, out, demo = drive(fake, cloud)
    assert not ok
    failed = demo.state.results[-1]
    assert failed.name == "instantiate (flavour simple)"
    assert "the cloud disagrees: server server-5: missing" in failed.summary
    assert "Demo FAILED at 'instantiate (flavour simple)'" in out and cloud.closed
