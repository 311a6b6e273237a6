"""etcd membership steps on a real 3-member cluster: remove a member, add a replacement."""

from __future__ import annotations

import asyncio

import pytest

from tests.integration.conftest import require
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import (
    EtcdHealth,
    EtcdMemberAdd,
    EtcdMemberList,
    EtcdMemberPromote,
    EtcdMemberRemove,
    EtcdStart,
    EtcdStop,
)
from vnfm.nodesteps.base import StepFailed

pytestmark = pytest.mark.integration


async def test_etcd_replace_member(make_hosts, ssh: SshExecutor) -> None:
    require("etcd", "etcdctl")
    hosts = make_hosts(4)
    steps = SshStepExecutor(ssh, {h.address: h.target() for h in hosts})
    peer = {f"m{i}": f"http://{h.address}:2380" for i, h in enumerate(hosts, 1)}
    client = {f"m{i}": f"http://{h.address}:2379" for i, h in enumerate(hosts, 1)}
    addr = {f"m{i}": h.address for i, h in enumerate(hosts, 1)}
    first = ("m1", "m2", "m3")

    def start(name: str, cluster: tuple[tuple[str, str], ...], state: str = "new") -> EtcdStart:
        return EtcdStart(name, peer[name], client[name], cluster, state=state)

    cluster = tuple((n, peer[n]) for n in first)
    results = await asyncio.gather(*(steps.run(addr[n], start(n, cluster)) for n in first))
    assert all(r.changed for r in results)
    all3 = tuple(client[n] for n in first)
    health = await steps.run(addr["m1"], EtcdHealth(endpoints=all3, wait_s=20))
    assert health.data["healthy"] is True, health
    assert health.data["endpoints"] == {u: True for u in all3}
    # idempotent: already running under that name
    assert not (await steps.run(addr["m2"], start("m2", cluster))).changed

    put = await ssh.run(hosts[0].target(), "ETCDCTL_API=3 etcdctl put /vnf/probe kept-across-replace")
    assert put.ok, put.stderr

    members = (await steps.run(addr["m1"], EtcdMemberList())).data["members"]
    assert sorted(m["name"] for m in members) == ["m1", "m2", "m3"]
    assert {m["name"]: m["peer_urls"] for m in members}["m3"] == [peer["m3"]]

    # scale-in / heal: remove m3 (retried through etcd's 5 s strict-reconfig guard)
    survivors = (client["m1"], client["m2"])
    removed = await steps.run(addr["m1"], EtcdMemberRemove(name="m3", endpoints=survivors))
    assert removed.changed and removed.data["id"]
    assert not (await steps.run(addr["m1"], EtcdMemberRemove(name="m3", endpoints=survivors))).changed
    members = (await steps.run(addr["m1"], EtcdMemberList(endpoints=survivors))).data["members"]
    assert sorted(m["name"] for m in members) == ["m1", "m2"]
    await steps.run(addr["m3"], EtcdStop(wipe_data=True))

    # add the replacement m4 and start it against the existing cluster
    added = await steps.run(addr["m1"], EtcdMemberAdd(name="m4", peer_url=peer["m4"], endpoints=survivors))
    assert added.changed
    assert sorted(added.data["members"]) == sorted([("m1", peer["m1"]), ("m2", peer["m2"]), ("m4", peer["m4"])])
    again = await steps.run(addr["m1"], EtcdMemberAdd(name="m4", peer_url=peer["m4"], endpoints=survivors))
    assert not again.changed and again.data["initial_cluster"] == added.data["initial_cluster"]
    started = await steps.run(addr["m4"], start("m4", tuple(added.data["members"]), state="existing"))
    assert started.changed

    final = (client["m1"], client["m2"], client["m4"])
    health = await steps.run(addr["m4"], EtcdHealth(endpoints=final, wait_s=20))
    assert health.data["healthy"] is True, health
    members = (await steps.run(addr["m4"], EtcdMemberList(endpoints=final))).data["members"]
    assert sorted(m["name"] for m in members) == ["m1", "m2", "m4"]
    assert len(members) == 3
    got = await ssh.run(hosts[3].target(), "ETCDCTL_API=3 etcdctl get --print-value-only /vnf/probe")
    assert got.stdout.strip() == "kept-across-replace"
    # an endpoint that is gone is reported unhealthy (no wait)
    gone = await steps.run(addr["m1"], EtcdHealth(endpoints=(client["m3"],)))
    assert gone.data["healthy"] is False

    # A control-plane join that failed after adding its member leaves one that never started and
    # so has no name yet: removal by name misses it, removal with its peer URL takes it away.
    stale = await steps.run(addr["m1"], EtcdMemberAdd(name="m3", peer_url=peer["m3"], endpoints=final))
    assert stale.changed
    listed = (await steps.run(addr["m1"], EtcdMemberList(endpoints=final))).data["members"]
    assert [m["name"] for m in listed if m["peer_urls"] == [peer["m3"]]] == [""]
    assert not (await steps.run(addr["m1"], EtcdMemberRemove(name="m3", endpoints=final))).changed
    gone_stale = await steps.run(addr["m1"], EtcdMemberRemove(name="m3", peer_url=peer["m3"], endpoints=final))
    assert gone_stale.changed and gone_stale.data["id"]
    listed = (await steps.run(addr["m1"], EtcdMemberList(endpoints=final))).data["members"]
    assert sorted(m["name"] for m in listed) == ["m1", "m2", "m4"]
    health = await steps.run(addr["m1"], EtcdHealth(endpoints=final, wait_s=20))
    assert health.data["healthy"] is True, health


async def test_etcd_learner_add_promote_remove(make_hosts, ssh: SshExecutor) -> None:
    """Control-plane scale's etcd steps on real etcd: a member joins as a learner (no vote), its
    promotion is refused until it is in sync with the leader, then it votes; a second learner is
    refused while one exists; removal of the new voter keeps the cluster healthy."""
    require("etcd", "etcdctl")
    hosts = make_hosts(3)
    steps = SshStepExecutor(ssh, {h.address: h.target() for h in hosts})
    peer = {f"m{i}": f"http://{h.address}:2380" for i, h in enumerate(hosts, 1)}
    client = {f"m{i}": f"http://{h.address}:2379" for i, h in enumerate(hosts, 1)}
    addr = {f"m{i}": h.address for i, h in enumerate(hosts, 1)}
    one = (client["m1"],)
    assert (await steps.run(addr["m1"], EtcdStart("m1", peer["m1"], client["m1"], (("m1", peer["m1"]),)))).changed
    assert (await steps.run(addr["m1"], EtcdHealth(endpoints=one, wait_s=20))).data["healthy"] is True

    added = await steps.run(addr["m1"], EtcdMemberAdd(name="m2", peer_url=peer["m2"], endpoints=one, learner=True))
    assert added.changed
    listed = (await steps.run(addr["m1"], EtcdMemberList(endpoints=one))).data["members"]
    assert {m["peer_urls"][0]: m["learner"] for m in listed} == {peer["m1"]: False, peer["m2"]: True}
    # a second learner while one exists: etcd refuses ("too many learner members")
    with pytest.raises(StepFailed, match="learner"):
        await steps.run(addr["m1"], EtcdMemberAdd(name="m3", peer_url=peer["m3"], endpoints=one, learner=True))
    # not started yet (so not in sync, and nameless): no member of that name to promote
    with pytest.raises(StepFailed, match="no member named m2"):
        await steps.run(addr["m1"], EtcdMemberPromote(name="m2", endpoints=one, deadline_s=1))

    started = await steps.run(addr["m2"], EtcdStart("m2", peer["m2"], client["m2"], tuple(added.data["members"]),
                                                      state="existing"))
    assert started.changed
    promoted = await steps.run(addr["m1"], EtcdMemberPromote(name="m2", endpoints=one, deadline_s=30))
    assert promoted.changed and promoted.data["id"]
    assert not (await steps.run(addr["m1"], EtcdMemberPromote(name="m2", endpoints=one))).changed
    both = (client["m1"], client["m2"])
    listed = (await steps.run(addr["m1"], EtcdMemberList(endpoints=both))).data["members"]
    assert sorted((m["name"], m["learner"]) for m in listed) == [("m1", False), ("m2", False)]
    assert (await steps.run(addr["m2"], EtcdHealth(endpoints=both, wait_s=20))).data["healthy"] is True

    # scale-in: the newest voter leaves, the first keeps serving alone
    assert (await steps.run(addr["m1"], EtcdMemberRemove(name="m2", endpoints=one))).changed
    listed = (await steps.run(addr["m1"], EtcdMemberList(endpoints=one))).data["members"]
    assert [m["name"] for m in listed] == ["m1"]
    await steps.run(addr["m2"], EtcdStop(wipe_data=True))
    assert (await steps.run(addr["m1"], EtcdHealth(endpoints=one, wait_s=20))).data["healthy"] is True
