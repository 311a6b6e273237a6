"""Detection and opt-in automatic heal on the simulated cloud (issue 28's "done when"), with short
settings: a check every 0.2 s, a VNFC healed once unhealthy for 0.3 s. A VM is killed by fault
injection (the VIM reports it SHUTOFF)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from vnfm.service.fm.watcher import cluster_vims

from .conftest import Api, ApiFactory, seed_body, tacker_sample_csar
from .test_ha_vip_port import HA_BODY
from .test_subscriptions import Receiver

FAST = {"health_interval": 0.2, "autoheal_after": 0.3, "autoheal_max_unhealthy": 0.4, "metrics_cache_seconds": 0}


async def _until(pred: Any, timeout: float = 30.0, what: str = "condition") -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = await pred()
        if got:
            return got
        assert loop.time() < deadline, f"no {what} within {timeout} s"
        await asyncio.sleep(0.05)


async def _cluster(api: Api, body: dict[str, Any] | None = None, csar: bytes | None = None,
                   autoheal: bool = True) -> tuple[str, list[dict[str, Any]]]:
    pkg_id = await api.create_package()
    assert (await api.upload(pkg_id, csar)).status_code == 202
    vnfd_id = (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()["vnfdId"]
    inst_id = await api.instantiated(vnfd_id, body)
    if autoheal:
        r = await api.c.patch(f"/vnflcm/v1/vnf_instances/{inst_id}",
                              json={"vnfConfigurableProperties": {"isAutohealEnabled": True}})
        assert r.status_code == 202, r.text
        await api.wait_op(r.headers["Location"])
    vnfcs = (await api.instance(inst_id))["instantiatedVnfInfo"]["vnfcResourceInfo"]
    return inst_id, vnfcs


async def _open_alarms(api: Api, inst_id: str) -> list[dict[str, Any]]:
    r = await api.c.get("/vnffm/v1/alarms", params={"filter": f"(eq,managedObjectId,{inst_id})"})
    return [a for a in r.json() if a["perceivedSeverity"] != "CLEARED"]


async def _heals(api: Api, inst_id: str) -> list[dict[str, Any]]:
    r = await api.c.get("/vnflcm/v1/vnf_lcm_op_occs", params={"filter": f"(eq,vnfInstanceId,{inst_id});"
                                                                         "(eq,operation,HEAL)"})
    return list(r.json())


async def test_dead_worker_alarm_heal_ready_and_cleared(api_factory: ApiFactory) -> None:
    api = await api_factory(**FAST)
    with Receiver() as receiver:
        assert (await api.c.post("/vnffm/v1/subscriptions", json={"callbackUri": receiver.url})).status_code == 201
        inst_id, vnfcs = await _cluster(api)
        worker = next(v for v in vnfcs if v["vduId"] == "workerNode")
        watcher = api.core.watcher
        assert watcher is not None
        # the detection latency is measured from the last check that saw the VNFC healthy: kill it after one
        await _until(lambda: _true((inst_id, worker["id"]) in watcher._seen_ok), what="a healthy check")
        loop = asyncio.get_running_loop()
        killed = loop.time()
        api.core.sim.inject(stopped=[worker["id"]])
        alarms = await _until(lambda: _open_alarms(api, inst_id), what="alarm")
        assert alarms[0]["vnfcInstanceIds"] == [worker["id"]] and alarms[0]["probableCause"] == "VIM_SERVER_DOWN"
        heals = await _until(lambda: _heals(api, inst_id), what="automatic heal")
        assert loop.time() - killed < 60
        heal = (await api.c.get(f"/vnflcm/v1/vnf_lcm_op_occs/{heals[0]['id']}")).json()
        assert heal["isAutomaticInvocation"] is True
        assert heal["operationParams"]["vnfcInstanceId"] == [worker["id"]]
        assert alarms[0]["id"] in heal["operationParams"]["cause"]
        await api.wait_op(f"/vnflcm/v1/vnf_lcm_op_occs/{heal['id']}")
        await _until(lambda: _no_open(api, inst_id), what="alarm cleared")
        await receiver.wait_for(lambda n: n.get("notificationType") == "AlarmClearedNotification"
                                and n["alarmId"] == alarms[0]["id"])
        inst = api.core.instances.get(inst_id)
        assert api.core.watcher is not None
        health = await api.core.watcher.health.check(inst, cluster_vims(api.core.vims.list()).get(inst_id))
        assert health[worker["id"]].finding is None and health[worker["id"]].role == "worker"  # node Ready again
    assert len(await _heals(api, inst_id)) == 1
    text = (await api.c.get("/metrics")).text
    assert "vnfm_alarm_detection_seconds_count 1.0" in text and "vnfm_autoheal_start_seconds_count 1.0" in text


async def _true(value: bool) -> bool:
    return value


async def _no_open(api: Api, inst_id: str) -> bool:
    return not await _open_alarms(api, inst_id)


async def test_autoheal_off_alarm_only(api_factory: ApiFactory) -> None:
    api = await api_factory(**FAST)
    inst_id, vnfcs = await _cluster(api, autoheal=False)
    worker = next(v for v in vnfcs if v["vduId"] == "workerNode")
    api.core.sim.inject(stopped=[worker["id"]])
    await _until(lambda: _open_alarms(api, inst_id), what="alarm")
    await asyncio.sleep(1.0)  # over three times autoheal_after: a heal would have started
    assert await _heals(api, inst_id) == []
    await api.run(inst_id, "terminate", {"terminationType": "FORCEFUL"})  # its alarms go with it
    await _until(lambda: _no_open(api, inst_id), what="the terminated instance's alarm cleared")


async def test_two_of_three_workers_down_over_the_limit_heals_nothing(api_factory: ApiFactory) -> None:
    api = await api_factory(**FAST)
    body = seed_body()
    inst_id, vnfcs = await _cluster(api, body)
    workers = [v for v in vnfcs if v["vduId"] == "workerNode"]
    if len(workers) < 3:
        occ = await api.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                               "numberOfSteps": 3 - len(workers)})
        assert occ["operationState"] == "COMPLETED"
        vnfcs = (await api.instance(inst_id))["instantiatedVnfInfo"]["vnfcResourceInfo"]
        workers = [v for v in vnfcs if v["vduId"] == "workerNode"]
    assert len(workers) == 3
    api.core.sim.inject(stopped=[workers[0]["id"], workers[1]["id"]])
    await _until(lambda: _has(api, inst_id, 2), what="two alarms")
    await asyncio.sleep(1.0)
    assert await _heals(api, inst_id) == []
    text = (await api.c.get("/metrics")).text
    assert 'vnfm_autoheal_skipped_total{reason="too_many_unhealthy"} 2.0' in text
    assert 'vnfm_alarms_open{severity="CRITICAL"} 2.0' in text and 'vnfm_alarms_open{severity="MAJOR"} 0.0' in text
    assert 'vnfm_alarms_raised_total{severity="CRITICAL"} 2.0' in text


async def _has(api: Api, inst_id: str, n: int) -> bool:
    return len(await _open_alarms(api, inst_id)) >= n


async def test_ha_master_healed_while_quorum_holds(api_factory: ApiFactory) -> None:
    api = await api_factory(**FAST)
    body = {**copy.deepcopy(HA_BODY), "vnfConfigurableProperties": {"isAutohealEnabled": True}}  # at instantiate
    inst_id, vnfcs = await _cluster(api, body, tacker_sample_csar("kubeadm"), autoheal=False)
    masters = [v for v in vnfcs if v["vduId"] == "masterNode"]
    assert len(masters) == 3
    api.core.sim.inject(stopped=[masters[1]["id"]])
    heals = await _until(lambda: _heals(api, inst_id), what="automatic heal of a master")
    heal = (await api.c.get(f"/vnflcm/v1/vnf_lcm_op_occs/{heals[0]['id']}")).json()
    assert heal["operationParams"]["vnfcInstanceId"] == [masters[1]["id"]]
    done = await api.wait_op(f"/vnflcm/v1/vnf_lcm_op_occs/{heals[0]['id']}", timeout=60)
    assert done["operationState"] == "COMPLETED"
    await _until(lambda: _no_open(api, inst_id), what="alarm cleared")


async def test_autoheal_flag_is_typed(api: Api) -> None:
    from .test_packages import assert_problem

    pkg_id = await api.create_package()
    assert (await api.upload(pkg_id)).status_code == 202
    vnfd_id = (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()["vnfdId"]
    inst_id = await api.create_instance(vnfd_id)
    bad = seed_body(vnfConfigurableProperties={"isAutohealEnabled": "yes"})
    assert_problem(await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=bad), 400,
                   "isAutohealEnabled")
    bad = seed_body(vnfConfigurableProperties={"isAutoscaleEnabled": True})
    assert_problem(await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=bad), 400,
                   "isAutoscaleEnabled")
    r = await api.c.patch(f"/vnflcm/v1/vnf_instances/{inst_id}",
                          json={"vnfConfigurableProperties": {"isAutohealEnabled": 1}})
    assert_problem(r, 400, "isAutohealEnabled")


async def test_node_not_ready_while_the_vm_runs_is_an_alarm_cleared_when_ready(api_factory: ApiFactory) -> None:
    """The kubelet stops (the twin's node NotReady, the VM ACTIVE): seen through the cluster's API."""
    api = await api_factory(**FAST)
    inst_id, vnfcs = await _cluster(api, autoheal=False)
    worker = next(v for v in vnfcs if v["vduId"] == "workerNode")
    with api.core.sim.edit_extras(inst_id) as ex:
        nodes = ex["k8s"]["nodes"]
        name = next(n for n, rec in nodes.items() if rec["server_id"] == worker["computeResource"]["resourceId"])
        nodes[name]["ready"] = False
        ex["k8s"].setdefault("faults", {})["never_ready"] = [name]  # its kubelet stays down
    alarms = await _until(lambda: _open_alarms(api, inst_id), what="alarm")
    assert alarms[0]["probableCause"] == "KUBERNETES_NODE_NOT_READY" and alarms[0]["perceivedSeverity"] == "MAJOR"
    assert alarms[0]["vnfcInstanceIds"] == [worker["id"]] and name in alarms[0]["faultDetails"][0]
    with api.core.sim.edit_extras(inst_id) as ex:
        ex["k8s"]["faults"]["never_ready"] = []  # the kubelet is back: the node turns Ready
    await _until(lambda: _no_open(api, inst_id), what="alarm cleared")


async def test_node_absent_from_the_api_is_an_alarm_after_the_grace_period(api_factory: ApiFactory) -> None:
    """A worker VNFC whose node the cluster's API does not list (deleted behind vnfm's back, or never
    joined) is alarmed once absent `health_absent_grace` seconds, and the alarm clears when it is back."""
    api = await api_factory(**FAST, health_absent_grace=1.0)
    inst_id, vnfcs = await _cluster(api, autoheal=False)
    worker = next(v for v in vnfcs if v["vduId"] == "workerNode")
    loop = asyncio.get_running_loop()
    with api.core.sim.edit_extras(inst_id) as ex:
        nodes = ex["k8s"]["nodes"]
        name = next(n for n, rec in nodes.items() if rec["server_id"] == worker["computeResource"]["resourceId"])
        record = nodes.pop(name)
    gone = loop.time()
    alarms = await _until(lambda: _open_alarms(api, inst_id), what="alarm")
    assert loop.time() - gone >= 1.0  # not before the grace period
    assert alarms[0]["probableCause"] == "KUBERNETES_NODE_ABSENT" and alarms[0]["perceivedSeverity"] == "MAJOR"
    assert alarms[0]["vnfcInstanceIds"] == [worker["id"]] and name in alarms[0]["faultDetails"][0]
    assert len(alarms) == 1  # the masters, present, and nothing else
    with api.core.sim.edit_extras(inst_id) as ex:
        ex["k8s"]["nodes"][name] = record
    await _until(lambda: _no_open(api, inst_id), what="alarm cleared")
