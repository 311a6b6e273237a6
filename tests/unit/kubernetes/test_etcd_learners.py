"""The twin's etcd membership is as strict as etcd about learners and quorum (twin/etcd.py)."""

from __future__ import annotations

import pytest

from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.etcd import EtcdHealth, EtcdMemberAdd, EtcdMemberList, EtcdMemberPromote, EtcdMemberRemove

from .conftest import K8s


async def test_learner_has_no_vote_and_is_promoted_only_in_sync(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple")
    master = k8s.app.instances.get(inst_id).resources.of_vdu("masterNode")[0]
    host = master.address("masterNode_CP1", floating_first=True)
    assert host
    clock = [1000.0]
    twin = k8s.twin(inst_id)
    twin.config.clock = lambda: clock[0]
    twin.config.learner_sync_time = 5.0

    added = await twin.run(host, EtcdMemberAdd(name="m2", peer_url="https://10.9.9.2:2380", learner=True))
    assert added.changed
    listed = {m["name"]: m["learner"] for m in (await twin.run(host, EtcdMemberList())).data["members"]}
    assert listed == {"masternode-0": False, "m2": True}
    # a learner answers no health check (it has no vote): the cluster is not all healthy
    health = (await twin.run(host, EtcdHealth())).data
    assert health["healthy"] is False and health["endpoints"]["https://10.9.9.2:2379"] is False
    # one learner at a time, as etcd
    with pytest.raises(StepFailed, match="too many learner members"):
        await twin.run(host, EtcdMemberAdd(name="m3", peer_url="https://10.9.9.3:2380", learner=True))
    # not in sync yet: refused with etcd's words, until the deadline
    with pytest.raises(StepFailed, match="can only promote a learner member which is in sync with leader"):
        await twin.run(host, EtcdMemberPromote(name="m2", deadline_s=0.01))
    clock[0] += 5.0
    assert (await twin.run(host, EtcdMemberPromote(name="m2", deadline_s=0.01))).changed
    assert not (await twin.run(host, EtcdMemberPromote(name="m2", deadline_s=0.01))).changed
    with pytest.raises(StepFailed, match="member nobody not found"):
        await twin.run(host, EtcdMemberPromote(name="nobody", deadline_s=0.01))

    # m2 votes now but never answers: 1 of 2 healthy voters is no quorum of 2 -> no voter may join,
    # nor may the healthy member be removed; the unhealthy one may
    twin.tx(lambda st: st["etcd"]["members"]["m2"].update(healthy=False))
    with pytest.raises(StepFailed, match="unhealthy cluster"):
        await twin.run(host, EtcdMemberAdd(name="m4", peer_url="https://10.9.9.4:2380"))
    with pytest.raises(StepFailed, match="unhealthy cluster"):
        await twin.run(host, EtcdMemberRemove(name="masternode-0"))
    assert (await twin.run(host, EtcdMemberRemove(name="m2"))).changed
    assert (await twin.run(host, EtcdHealth())).data["healthy"] is True
