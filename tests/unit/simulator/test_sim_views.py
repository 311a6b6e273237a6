"""Look-ups of the simulated cloud read shared parsed views of documents (tx.py `Views`): what
another process wrote is seen, what a look-up hands out is the caller's own, the views are bounded;
a node step of the twin is one transaction, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.simulator import SimCloud, SimConfig, SimulatorInfraDriver
from vnfm.adapters.infra.simulator.store import StateStore
from vnfm.adapters.infra.simulator.twin.executor import TwinExecutor
from vnfm.adapters.infra.simulator.tx import Views
from vnfm.nodesteps.base import HostKeyChanged, StepFailed
from vnfm.nodesteps.kubeadm import KubeadmInit, PrepareNode

FAST = SimConfig(boot_time=0, api_latency=0, delete_time=0)
SMALL = {"masterNode": 1, "workerNode": 2, "storage_server": 0}


async def _deployed(cloud: SimCloud, make_ctx: Any) -> tuple[str, str, str]:
    """(instance id, the first master's management address, its server id)."""
    ctx = make_ctx()
    res = await SimulatorInfraDriver(cloud).deploy(ctx, SMALL)
    master = res.of_vdu("masterNode")[0]
    return ctx.instance_id, master.cps[0].ip_addresses[0], master.server_id



def _count_acquires(monkeypatch: Any) -> list[int]:
    """A list that grows by one each time the simulated cloud's store lock is taken."""
    began: list[int] = []
    acquire = StateStore._acquire

    def counted(self: StateStore) -> None:
        began.append(1)
        acquire(self)

    monkeypatch.setattr(StateStore, "_acquire", counted)
    return began

async def test_a_look_up_sees_what_another_process_wrote(tmp_path: Path, make_ctx):
    """Two stores on one file (two processes): the reader's view follows the writer's commits."""
    writer, reader = SimCloud.at(tmp_path / "s.db", FAST), SimCloud.at(tmp_path / "s.db", FAST)
    _, address, sid = await _deployed(writer, make_ctx)
    assert reader.server_by_address(address)["ssh_reachable"] is True
    assert reader.server(sid)["ssh_reachable"] is True  # the view is parsed now
    writer.set_reachable(sid, False)
    assert reader.server_by_address(address)["ssh_reachable"] is False
    assert reader.servers([sid])[sid]["ssh_reachable"] is False
    writer.set_reachable(sid, True)
    assert reader.server(sid)["ssh_reachable"] is True


async def test_what_a_look_up_hands_out_is_the_callers_own(cloud, make_ctx):
    iid, address, sid = await _deployed(cloud, make_ctx)
    cloud.update_extras(iid, lambda ex: ex.update(k8s={"nodes": {"a": 1}}))
    cloud.server_by_address(address)["status"] = "CHANGED"
    cloud.server(sid)["host_key"]["public_key"] = "CHANGED"
    cloud.servers([sid])[sid]["name"] = "CHANGED"
    cloud.deployment(iid)["vnfcs"].clear()
    with cloud.atomic():  # joined a write transaction: still a copy, not the live record
        cloud.extras(iid)["k8s"]["nodes"]["a"] = 2
    server = cloud.server_by_address(address)
    assert server["status"] == "ACTIVE" and server["name"] != "CHANGED"
    assert server["host_key"]["public_key"].startswith("ssh-ed25519 ")
    assert len(cloud.deployment(iid)["vnfcs"]) == 3
    assert cloud.extras(iid)["k8s"]["nodes"]["a"] == 1


def test_views_are_bounded_and_follow_the_stored_text():
    views = Views(max_bytes=20)
    first = views.parsed("a", '{"x": 1}')
    assert views.parsed("a", '{"x": 1}') is first  # unchanged: not parsed again
    assert views.parsed("a", '{"x": 2}') == {"x": 2}  # changed: parsed, replaces the old text
    views.parsed("b", "{}")
    views.parsed("c", "{}")
    views.parsed("d", '{"long": 12345}')  # 8 + 2 + 2 + 15 bytes: the oldest goes
    assert list(views._docs) == ["b", "c", "d"] and views._bytes == 19


async def test_a_twin_step_is_one_transaction_and_all_or_nothing(cloud, make_ctx, monkeypatch):
    iid, address, sid = await _deployed(cloud, make_ctx)
    ex = TwinExecutor(cloud, iid)
    began = _count_acquires(monkeypatch)
    await ex.run(address, PrepareNode("masternode-0", "1.30.4"))
    assert len(began) == 1  # the host check and the state change
    assert ex.state()["hosts"][sid]["prepared"]["hostname"] == "masternode-0"

    def half_then_refuse(tw: Any, host: str, server_id: str, step: Any) -> Any:
        tw.tx(lambda st: st["hosts"][server_id].update(half="done"))
        raise StepFailed(host, step, "refused after a change")

    ex._handlers[KubeadmInit] = half_then_refuse
    with pytest.raises(StepFailed, match="refused after a change"):
        await ex.run(address, KubeadmInit("masternode-0", address, f"{address}:6443", "10.244.0.0/16",
                                          "10.96.0.0/12", "1.30.4", ()))
    assert "half" not in ex.state()["hosts"][sid]
    cloud.set_reachable(sid, False)
    with pytest.raises(StepFailed, match="does not answer on SSH"):
        await ex.run(address, PrepareNode("masternode-0", "1.30.5"))
    assert ex.state()["hosts"][sid]["prepared"]["version"] == "1.30.4"


async def test_a_host_check_reads_what_server_by_address_reads(tmp_path: Path, make_ctx):
    """`host_brief` (the twin's host check, no copy of the record) agrees with `server_by_address`
    for fixed and floating addresses, follows another process's commits and knows no other address."""
    writer, reader = SimCloud.at(tmp_path / "s.db", FAST), SimCloud.at(tmp_path / "s.db", FAST)
    iid, address, sid = await _deployed(writer, make_ctx)
    floating = next(f["floating_ip_address"] for f in writer.snapshot(iid)["floating_ips"])
    for host in (address, floating):
        server = reader.server_by_address(host)
        brief = reader.host_brief(host)
        assert brief is not None and server is not None
        assert brief == (server["id"], server["name"], "ACTIVE", True, server["host_key"]["public_key"])
    writer.set_reachable(sid, False)
    assert reader.host_brief(address).ssh_reachable is False
    assert reader.host_brief("203.0.113.9") is None
    with pytest.raises(StepFailed, match="cannot read its SSH host key"):
        await TwinExecutor(reader, iid).verify_host_keys([address])
    with pytest.raises(StepFailed, match="no server has this address"):
        await TwinExecutor(reader, iid).run("203.0.113.9", PrepareNode("masternode-0", "1.30.4"))


async def test_host_keys_of_several_hosts_are_read_in_one_transaction(cloud, make_ctx, monkeypatch):
    ctx = make_ctx()
    res = await SimulatorInfraDriver(cloud).deploy(ctx, SMALL)
    hosts = [v.cps[0].ip_addresses[0] for v in res.vnfcs]
    ex = TwinExecutor(cloud, ctx.instance_id)
    began = _count_acquires(monkeypatch)
    await ex.verify_host_keys([*hosts, hosts[0]])
    assert len(began) == 1 and len(ex.pins) == 3
    ex.pins[f"host:{hosts[1]}"] = "ssh-ed25519 AAAA-another-key"
    with pytest.raises(HostKeyChanged, match="changed since it was pinned"):
        await ex.verify_host_keys(hosts)


async def test_peek_reads_the_twin_state_without_a_copy_and_init_copies_nothing_else(cloud, make_ctx, monkeypatch):
    """`peek` hands `fn` the state as stored (a read: as parsed; inside a write: the live record,
    no copy), so a kubeadm init step checks for a restored etcd without copying the whole state."""
    iid, address, sid = await _deployed(cloud, make_ctx)
    ex = TwinExecutor(cloud, iid)
    await ex.run(address, PrepareNode("masternode-0", "1.30.4"))
    assert ex.peek(lambda st: st["hosts"][sid]["prepared"]["hostname"]) == "masternode-0"
    with cloud.atomic():
        ex.tx(lambda st: st["hosts"][sid].update(seen="live"))
        assert ex.peek(lambda st: st["hosts"][sid]["seen"]) == "live"  # joined: the live record
        assert ex.peek(lambda st: st) is ex.peek(lambda st: st)  # not a copy
    assert ex.state()["hosts"][sid]["seen"] == "live"

    def no_copy() -> dict[str, Any]:
        raise AssertionError("a whole copy of the twin state was made")

    monkeypatch.setattr(ex, "state", no_copy)
    await ex.run(address, KubeadmInit("masternode-0", address, f"{address}:6443", "10.244.0.0/16",
                                      "10.96.0.0/12", "1.30.4", ()))
    assert ex.peek(lambda st: st["cluster"]["initialized"]) is True
