"""Control-plane scale on the simulated cloud (issue 27 item 4): 1 -> 3 -> 5 -> 3 masters with the
quorum checked after every etcd change (the twin's membership history), the API probed through the
VIP (keepalived holder -> its HAProxy -> Ready masters) and through the registered VIM; refusals
with the numbers; a crash mid-scale that retry and rollback resolve."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin import handlers
from vnfm.adapters.infra.simulator.twin.control_plane import vip_answers
from vnfm.adapters.kube.nodes import cluster_nodes
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.etcd_quorum import quorum
from vnfm.domain.model import OpState
from vnfm.examples import EXAMPLE_VNFD_ID, example_package_dir
from vnfm.nodesteps.lb import HaproxySetBackends
from vnfm.packaging.csar import build_csar

from .conftest import K8s, params

VIP = "172.24.0.250"
MASTERS = [f"masternode-{i}" for i in range(5)]
DF = "sample_kubernetes_df_simple.yaml"


def scalable_csar(vnfd_id: str) -> bytes:
    """The example package whose simple flavour scales its masters one per step, up to 5."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "k8s_cluster"
        shutil.copytree(example_package_dir(), tree)
        for f in (tree / "Definitions").glob("*.yaml"):
            f.write_text(f.read_text().replace(EXAMPLE_VNFD_ID, vnfd_id))
        df = tree / "Definitions" / DF
        text = df.read_text()
        for old, new in (("max_number_of_instances: 1", "max_number_of_instances: 5"),
                         ("(fixed count in this flavour)\n              max_scale_level: 0",
                          "(one per step)\n              max_scale_level: 4")):
            assert old in text, old
            text = text.replace(old, new, 1)
        df.write_text(text)
        return build_csar(tree)


@pytest.fixture
def cp(k8s: K8s) -> K8s:
    pkg = k8s.app.packages.create({})
    vnfd_id = str(uuid.uuid4())
    k8s.app.packages.upload(pkg.id, scalable_csar(vnfd_id))
    k8s.vnfd_id = vnfd_id
    return k8s


def scale(k8s: K8s, inst_id: str, kind: str, steps: int = 2, **extra: Any) -> Any:
    body: dict[str, Any] = {"type": kind, "aspectId": "master_instance", "numberOfSteps": steps}
    if extra:
        body["additionalParams"] = extra
    return k8s.app.instances.scale(inst_id, body)


class Probe:
    """Reads the twin every poll while an operation runs: moments the API did not answer at the
    cluster's endpoint (through the VIP: keepalived holder -> its HAProxy -> a Ready master), and
    moments etcd's healthy voters were no quorum."""

    def __init__(self, k8s: K8s, inst_id: str) -> None:
        self.k8s, self.inst_id = k8s, inst_id
        self.down = self.no_quorum = self.polls = 0
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        while True:
            st = self.k8s.state(self.inst_id)
            ep = st["cluster"]["endpoint"]
            host = ep.rpartition(":")[0]
            direct = [n["name"] for n in st["nodes"].values() if n["role"] == "master" and n["ready"]
                      and host in n["addresses"]]
            if not (vip_answers(st, ep) if ep.endswith(":8383") else direct):
                self.down += 1
            voters = [m for m in st["etcd"]["members"].values() if not m.get("learner")]
            if sum(1 for m in voters if m["healthy"]) < quorum(len(voters)):
                self.no_quorum += 1
            self.polls += 1
            await asyncio.sleep(0.001)

    def __enter__(self) -> Probe:
        self.task = asyncio.get_running_loop().create_task(self.run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.task is not None
        self.task.cancel()


async def assert_control_plane(k8s: K8s, inst_id: str, masters: list[str]) -> None:
    """Every etcd change so far kept a healthy quorum; etcd, HAProxy, keepalived, the endpoint and
    the API (through the VIP and through the VIM) all show exactly `masters`."""
    st = k8s.state(inst_id)
    history = st["etcd"]["history"]
    assert history and all(h["healthy"] >= quorum(h["voters"]) for h in history), history
    members = st["etcd"]["members"]
    assert sorted(members) == masters
    assert all(m["healthy"] and not m["learner"] for m in members.values())
    v = k8s.view(inst_id)
    assert v["endpoint"] == f"{VIP}:8383"
    live = {n["server_id"]: n["name"] for n in st["nodes"].values()}  # hosts of removed VMs stay in the twin
    lbs = {live[sid]: [b[0] for b in h["haproxy"]["backends"]] for sid, h in st["hosts"].items()
           if sid in live and h.get("haproxy")}
    assert sorted(lbs) == masters and all(b == masters for b in lbs.values()), lbs
    held = {live[sid]: h["keepalived"] for sid, h in st["hosts"].items() if sid in live and h.get("keepalived")}
    assert sorted(held) == masters and all(k["vip"] == VIP for k in held.values())
    assert all(sorted(k["peers"]) == sorted({*k["peers"]}) and len(k["peers"]) == len(masters) - 1
               for k in held.values())
    assert held["masternode-0"]["priority"] == max(k["priority"] for k in held.values())
    assert sorted(vip_answers(st, v["endpoint"])) == masters
    assert all(st["hosts"][n["server_id"]].get("kubelet_server") == f"{VIP}:8383" for n in st["nodes"].values())
    vim = k8s.app.vims.get(k8s.app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])
    assert vim is not None
    got = await asyncio.to_thread(cluster_nodes, vim)
    assert sorted(n for n, s in got.items() if s.role == "master") == masters
    assert all(s.ready for s in got.values())


async def test_masters_1_3_5_3_with_quorum_at_every_step(cp: K8s) -> None:
    app = cp.app
    cp.twin_config.learner_sync_time = 0.05  # each learner is promoted only once caught up
    inst_id, _ = await cp.instantiate("simple")
    cp.twin_config.default_latency = 0.002  # every step takes a little time: the probe sees between them
    assert cp.view(inst_id)["endpoint"].endswith(":6443")
    # 1 -> 3 needs the VIP: refused naming the key, nothing started
    with pytest.raises(UnprocessableEntity, match=r"master_node\.cluster_vip: is required to scale a single"):
        scale(cp, inst_id, "SCALE_OUT")
    with Probe(cp, inst_id) as probe:
        occ = await cp.done(scale(cp, inst_id, "SCALE_OUT", **params(master_node__cluster_vip=VIP)))
    assert probe.polls > 20 and probe.down == 0 and probe.no_quorum == 0
    await assert_control_plane(cp, inst_id, MASTERS[:3])
    st = cp.state(inst_id)
    assert VIP in st["cluster"]["cert_sans"]
    assert st["cluster"]["kube_proxy_server"] == st["cluster"]["cluster_info_server"] == f"https://{VIP}:8383"
    old = [n for n in st["nodes"].values() if n["name"] in ("masternode-0", "workernode-0", "workernode-1")]
    assert all(st["hosts"][n["server_id"]]["kubelet_server"] == f"{VIP}:8383" for n in old)
    changes = [h["change"] for h in st["etcd"]["history"]]
    assert changes[-4:] == ["add learner masternode-1", "promote masternode-1",
                            "add learner masternode-2", "promote masternode-2"]
    assert any("turning the single control plane masternode-0 into an HA one" in e["message"] for e in occ.events)
    assert any("updated in place" in e["message"] for e in occ.events)  # the VIM moved to the VIP

    # even sizes are refused with the numbers
    with pytest.raises(UnprocessableEntity, match=r"scale-out of the masters 3 -> 4: etcd needs an odd number"):
        scale(cp, inst_id, "SCALE_OUT", steps=1)
    with pytest.raises(UnprocessableEntity, match=r"cluster_vip: '172.24.0.251' is not the control plane's VIP "):
        scale(cp, inst_id, "SCALE_OUT", **params(master_node__cluster_vip="172.24.0.251"))
    with Probe(cp, inst_id) as probe:
        await cp.done(scale(cp, inst_id, "SCALE_OUT"))
    assert probe.polls > 20 and probe.down == 0 and probe.no_quorum == 0
    await assert_control_plane(cp, inst_id, MASTERS)

    # 5 -> 3 with masternode-1 unhealthy, removed first (named), then the newest
    cp.twin(inst_id).tx(lambda st: st["etcd"]["members"]["masternode-1"].update(healthy=False))
    ms = {v.name: v.id for v in app.instances.get(inst_id).resources.of_vdu("masterNode")}
    with Probe(cp, inst_id) as probe:
        occ = await cp.done(scale(cp, inst_id, "SCALE_IN", vnfcInstanceIds=[ms["masterNode-4"], ms["masterNode-1"]]))
    assert probe.polls > 20 and probe.down == 0 and probe.no_quorum == 0
    removed = [e["message"] for e in occ.events if "leaves etcd" in e["message"]]
    assert removed[0].startswith("master masternode-1 leaves etcd (4 members remain, 4 healthy, quorum 3)")
    assert removed[1].startswith("master masternode-4 leaves etcd (3 members remain, 3 healthy, quorum 2)")
    await assert_control_plane(cp, inst_id, ["masternode-0", "masternode-2", "masternode-3"])
    # 3 -> 1 is refused (an HA control plane stays HA)
    with pytest.raises(UnprocessableEntity, match="does not go back to a single master"):
        scale(cp, inst_id, "SCALE_IN")


async def test_scale_in_that_would_lose_quorum_is_refused_with_the_numbers(cp: K8s) -> None:
    app = cp.app
    inst_id, _ = await cp.instantiate("simple")
    await cp.done(scale(cp, inst_id, "SCALE_OUT", **params(master_node__cluster_vip=VIP)))
    await cp.done(scale(cp, inst_id, "SCALE_OUT"))

    def sick(st: dict[str, Any]) -> None:
        for m in ("masternode-0", "masternode-1"):
            st["etcd"]["members"][m]["healthy"] = False

    cp.twin(inst_id).tx(sick)
    # the driver last saw every member healthy: the request is accepted, and the hook observes etcd
    # before changing anything and refuses
    occ = await cp.wait(scale(cp, inst_id, "SCALE_IN"))
    assert occ.operation_state == OpState.FAILED_TEMP
    numbers = ("removing etcd member masternode-4 would lose quorum: 4 members would remain, 2 of them "
               "healthy, quorum is 3 (unhealthy: masternode-0, masternode-1; heal them first)")
    assert numbers in str(occ.error)
    assert sorted(cp.state(inst_id)["etcd"]["members"]) == MASTERS  # nothing was removed
    rolled = await cp.wait(app.instances.rollback(occ.id))
    assert rolled.operation_state == OpState.ROLLED_BACK, rolled.error
    # now the driver has seen them unhealthy: the next request is refused when it arrives (422)
    with pytest.raises(UnprocessableEntity) as e:
        scale(cp, inst_id, "SCALE_IN")
    assert e.value.detail == ("scale-in of the masters 5 -> 3 with masternode-0, masternode-1 unhealthy (as last "
                              f"observed): {numbers}")
    assert len(app.instances.get(inst_id).resources.of_vdu("masterNode")) == 5


async def test_crash_mid_scale_out_then_retry_or_rollback(cp: K8s, monkeypatch: pytest.MonkeyPatch) -> None:
    app = cp.app
    original = handlers.ALL_HANDLERS[HaproxySetBackends]
    crashes = {"left": 1}

    def crash(tw: Any, host: str, sid: str, step: HaproxySetBackends) -> Any:
        # the process dies while the second new master is being added (the first has joined)
        if len(step.backends) == 3 and crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("killed while adding masternode-2")
        return original(tw, host, sid, step)

    monkeypatch.setitem(handlers.ALL_HANDLERS, HaproxySetBackends, crash)  # type: ignore[index]
    for verb in ("retry", "rollback"):
        crashes["left"] = 1
        inst_id, _ = await cp.instantiate("simple")
        occ = await cp.wait(scale(cp, inst_id, "SCALE_OUT", **params(master_node__cluster_vip=VIP)))
        assert occ.operation_state == OpState.FAILED_TEMP and "killed" in str(occ.error)
        assert sorted(cp.state(inst_id)["etcd"]["members"]) == MASTERS[:2]
        if verb == "retry":
            again = await cp.done(app.instances.retry(occ.id))
            assert any("updated in place" in e["message"] for e in again.events)  # the VIM moved to the VIP
            await assert_control_plane(cp, inst_id, MASTERS[:3])
        else:
            rolled = await cp.wait(app.instances.rollback(occ.id))
            assert rolled.operation_state == OpState.ROLLED_BACK, rolled.error
            # the joined master left etcd, HAProxy and the cluster; the control plane stays behind its VIP
            await assert_control_plane(cp, inst_id, MASTERS[:1])
            assert sorted(cp.view(inst_id)["nodes"]) == ["masternode-0", "workernode-0", "workernode-1"]
