"""The basic demo scenario (demo/basic.py, demo/runner.py) against the fake server."""

from __future__ import annotations

import json

import pytest

from tests.unit.cli.cli_fake import BASE, FakeVnfm, tiny_csar
from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.demo import Demo, instantiate_request, pick_worker_vnfc


def drive(fake: FakeVnfm) -> tuple[bool, str, Demo]:
    lines: list[str] = []
    with VnfmClient(BASE, transport=fake.transport()) as client:
        demo = Demo(client, lines.append, timeout=30)
        ok = demo.run(tiny_csar())
    return ok, "\n".join(lines), demo


def test_demo_runs_every_step_and_reports_state() -> None:
    fake = FakeVnfm()
    ok, out, demo = drive(fake)
    assert ok, out
    assert [r.name for r in demo.state.results] == [
        "onboard the example package",
        "create the VNF instance",
        "instantiate (flavour simple)",
        "scale out worker_instance by 1",
        "scale in worker_instance by 1",
        "heal one worker VNFC",
        "heal the entire VNF",
        "terminate",
        "delete the VNF instance",
    ]
    assert all(r.ok for r in demo.state.results)
    # VNFCs per VDU after each LCM step
    assert "INSTANTIATED, vnfcs masterNode=1 workerNode=2, scale worker_instance=0" in out
    assert "vnfcs masterNode=1 workerNode=3, scale worker_instance=1" in out
    assert "-healed" in out  # heal VNFC shows the replaced server
    assert "Demo succeeded: 9 steps" in out
    final = next(ln for ln in out.splitlines() if ln.startswith("Final state:"))
    assert "gone (404)" in final and "servers=0" in final
    assert fake.instances == {}
    # the requests are seed-shaped
    inst_body = fake.bodies("POST", "/instantiate")[0]
    assert inst_body == instantiate_request("simple")
    assert "vimConnectionInfo" not in inst_body
    k8s = inst_body["additionalParams"]["k8s_cluster_installation_param"]
    assert k8s["master_node"]["ssh_cp_name"] == "masterNode_CP1"
    assert k8s["worker_node"]["ssh_cp_name"] == "workerNode_CP2"
    assert fake.bodies("POST", "/scale") == [
        {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 1},
        {"type": "SCALE_IN", "aspectId": "worker_instance", "numberOfSteps": 1},
    ]
    heal_bodies = fake.bodies("POST", "/heal")
    assert len(heal_bodies[0]["vnfcInstanceId"]) == 1 and "vnfcInstanceId" not in heal_bodies[1]


def test_demo_never_prints_passwords() -> None:
    ok, out, _ = drive(FakeVnfm())
    assert ok
    assert '"password": "******"' in out
    assert '"password": "ubuntu"' not in out
    req = json.dumps(instantiate_request())
    assert '"password": "ubuntu"' in req  # the real request does carry them


def test_demo_stops_at_the_first_failure_and_says_so() -> None:
    fake = FakeVnfm()
    fake.fail["SCALE"] = {
        "status": 500,
        "title": "Internal Server Error",
        "detail": "the simulated cloud failed to build server w-3",
    }
    ok, out, demo = drive(fake)
    assert not ok
    assert [r.ok for r in demo.state.results] == [True, True, True, False]
    assert "Demo FAILED at 'scale out worker_instance by 1'" in out
    assert "failed to build server w-3" in out
    assert out.count("SKIPPED") == 5


def test_pick_worker_vnfc() -> None:
    inst = {
        "instantiatedVnfInfo": {
            "vnfcResourceInfo": [
                {"id": "a", "vduId": "masterNode"},
                {"id": "b", "vduId": "workerNode"},
                {"id": "c", "vduId": "storage"},
            ]
        }
    }
    assert pick_worker_vnfc(inst)["id"] == "b"
    with pytest.raises(Exception, match="no VNFCs"):
        pick_worker_vnfc({})
