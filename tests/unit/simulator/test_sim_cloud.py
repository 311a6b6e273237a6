"""SimCloud: fault injection, state stores (memory, shared SQLite file), snapshot, extras."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vnfm.adapters.infra.simulator import (
    MemoryStateStore,
    ServerBuildError,
    ServerDeleteError,
    SimCloud,
    SimConfig,
    SimFaults,
    SimulatorInfraDriver,
    StateStore,
)
from vnfm.domain.errors import NotFound

FAST = SimConfig(boot_time=0, api_latency=0, delete_time=0)


# ------------------------------------------------------------------------------------ faults
async def test_build_failure_raises_naming_server_then_retry_converges(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    cloud.inject(fail_build={"workerNode": 1})
    with pytest.raises(ServerBuildError) as err:
        await driver.deploy(ctx, counts)
    assert "No valid host was found" in str(err.value)
    failed = cloud.server(err.value.server_id)
    assert failed["status"] == "ERROR" and failed["fault"]["message"] == err.value.reason
    assert failed["name"] in str(err.value) and failed["id"] in str(err.value)
    snap = cloud.snapshot(ctx.instance_id)
    assert snap["deployments"][0]["status"] == "CREATE_FAILED"
    assert failed["id"] in snap["deployments"][0]["status_reason"]
    partial = await driver.current(ctx)
    assert partial.counts() == counts  # the partial deployment is kept
    assert cloud.faults().fail_build == {"workerNode": 0}

    res = await driver.deploy(ctx, counts)  # retry
    assert res.ids() == partial.ids()
    healed = res.by_id(failed["vnfc_id"])
    assert healed.server_id != failed["id"] and cloud.server(failed["id"]) is None
    assert healed.cps[0].port_id == partial.by_id(failed["vnfc_id"]).cps[0].port_id
    assert all(cloud.server(v.server_id)["status"] == "ACTIVE" for v in res.vnfcs)
    assert len(cloud.snapshot(ctx.instance_id)["servers"]) == 4
    assert cloud.snapshot(ctx.instance_id)["deployments"][0]["status"] == "CREATE_COMPLETE"


async def test_build_failure_during_scale_out_then_retry(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    await driver.deploy(ctx, counts)
    cloud.inject(SimFaults(fail_build={"workerNode": 2}, build_message="Exceeded maximum number of retries."))
    target = {**counts, "workerNode": 4}
    with pytest.raises(Exception, match="Exceeded maximum number of retries") as err:
        await driver.update(ctx, target, [])
    assert "2 failures" in str(err.value)
    res = await driver.update(ctx, target, [])
    assert res.counts() == target
    assert all(cloud.server(v.server_id)["status"] == "ACTIVE" for v in res.vnfcs)


async def test_delete_failure_then_retry(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    await driver.deploy(ctx, counts)
    cloud.inject(fail_delete=1)
    with pytest.raises(ServerDeleteError):
        await driver.undeploy(ctx)
    snap = cloud.snapshot(ctx.instance_id)
    assert snap["deployments"][0]["status"] == "DELETE_FAILED"
    assert [s["status"] for s in snap["servers"]].count("ERROR") == 1
    await driver.undeploy(ctx)
    assert cloud.snapshot(ctx.instance_id)["servers"] == []
    assert cloud.deployment(ctx.instance_id) is None


async def test_unreachable_server_and_heal(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    res = await driver.deploy(ctx, counts)
    worker = res.of_vdu("workerNode")[0]
    cloud.inject(unreachable=[worker.id])  # by VNFC id
    assert cloud.server(worker.server_id)["ssh_reachable"] is False
    assert cloud.server(res.of_vdu("masterNode")[0].server_id)["ssh_reachable"] is True
    healed = (await driver.heal(make_ctx(ctx.instance_id), [worker.id])).by_id(worker.id)
    assert cloud.server(healed.server_id)["ssh_reachable"] is True
    # unreachable by name, back again with set_reachable / clear_faults
    cloud.inject(unreachable=["masterNode-0"])
    master = res.of_vdu("masterNode")[0]
    assert cloud.server(master.server_id)["ssh_reachable"] is False
    cloud.clear_faults()
    assert cloud.server(master.server_id)["ssh_reachable"] is True
    with pytest.raises(NotFound, match="no-such-server"):
        cloud.inject(unreachable=["no-such-server"])


async def test_unreachable_next_servers(driver, cloud, make_ctx, counts):
    cloud.inject(unreachable_next={"workerNode": 1})
    res = await driver.deploy(make_ctx(), counts)
    reach = [cloud.server(v.server_id)["ssh_reachable"] for v in res.of_vdu("workerNode")]
    assert sorted(reach) == [False, True]
    assert cloud.server(res.of_vdu("masterNode")[0].server_id)["ssh_reachable"] is True


def test_clear_faults_drops_pending():
    cloud = SimCloud(config=FAST)
    cloud.inject(fail_build={"a": 2}, fail_delete=3)
    cloud.inject(fail_build={"a": 1})
    assert cloud.faults().fail_build == {"a": 3} and cloud.faults().fail_delete == 3
    cloud.clear_faults()
    assert cloud.faults() == SimFaults()


# ------------------------------------------------------------------------------------ stores
def test_memory_store_rolls_back_on_error():
    store = MemoryStateStore()
    with pytest.raises(RuntimeError), store.transaction() as state:
        state["extras"]["x"] = {"a": 1}
        raise RuntimeError("boom")
    assert store.read()["extras"] == {}
    with store.transaction() as state:
        state["extras"]["x"] = {"a": 1}
    assert store.read()["extras"] == {"x": {"a": 1}}
    store.read()["extras"]["x"]["a"] = 2  # a copy
    assert store.read()["extras"]["x"]["a"] == 1


def test_file_store_rolls_back_and_leaves_only_its_files(tmp_path: Path):
    path = tmp_path / "sim" / "cloud.db"
    store = StateStore(path)
    with store.begin() as tx:
        tx.extras("x", create=True)["a"] = 1  # type: ignore[index]
    with pytest.raises(RuntimeError), store.begin() as tx:
        tx.extras("x")["a"] = 2  # type: ignore[index]
        tx.create_doc("i1")
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError), store.transaction() as state:  # the whole-state interface too
        state["extras"]["x"] = {"a": 3}
        raise RuntimeError("boom")
    again = StateStore(path)
    assert again.read()["extras"] == {"x": {"a": 1}} and again.read()["deployments"] == {}
    assert {p.name for p in path.parent.iterdir()} <= {"cloud.db", "cloud.db-wal", "cloud.db-shm"}


async def test_file_shared_by_two_clouds_and_survives_restart(tmp_path: Path, make_ctx, counts):
    path = tmp_path / "simcloud.db"
    a = SimCloud.at(path, FAST)
    b = SimCloud.at(path, FAST)
    ctx = make_ctx()
    res = await SimulatorInfraDriver(a).deploy(ctx, counts)
    # b (think: another process, e.g. the CLI) sees it and injects a fault that a then meets
    assert {s["id"] for s in b.snapshot(ctx.instance_id)["servers"]} == {v.server_id for v in res.vnfcs}
    b.inject(fail_build={"workerNode": 1})
    with pytest.raises(ServerBuildError):
        await SimulatorInfraDriver(a).update(ctx, {**counts, "workerNode": 3}, [])
    # a "restart": a new cloud object on the same file resumes and converges
    c = SimCloud.at(path, FAST)
    done = await SimulatorInfraDriver(c).update(ctx, {**counts, "workerNode": 3}, [])
    assert done.counts()["workerNode"] == 3
    assert (await SimulatorInfraDriver(b).current(ctx)).to_dict() == done.to_dict()
    b.update_extras(ctx.instance_id, lambda ex: ex.setdefault("etcd", []).append("m1"))
    assert a.extras(ctx.instance_id) == {"etcd": ["m1"]}


def test_file_store_serialises_processes(tmp_path: Path):
    path = tmp_path / "shared.db"
    script = textwrap.dedent(
        f"""
        from vnfm.adapters.infra.simulator import SimCloud
        cloud = SimCloud.at({str(path)!r})
        def bump(ex):
            ex["n"] = ex.get("n", 0) + 1
        for _ in range(60):
            cloud.update_extras("counter", bump)
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script]) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    assert SimCloud.at(path).extras("counter") == {"n": 180}


# ------------------------------------------------------------------------------------ snapshot / extras
async def test_snapshot_content(driver, cloud, make_ctx, counts, net0):
    ctx, other = make_ctx(), make_ctx()
    res = await driver.deploy(ctx, counts)
    await driver.deploy(other, {"masterNode": 1, "workerNode": 1, "storage_server": 0})
    full = cloud.snapshot()
    mine = cloud.snapshot(ctx.instance_id)
    json.dumps(full)  # JSON-ready
    assert set(mine) >= {"networks", "ports", "floating_ips", "servers", "volumes", "deployments", "faults"}
    assert len(full["servers"]) == 4 + 2 and len(mine["servers"]) == 4
    assert [d["instance_id"] for d in mine["deployments"]] == [ctx.instance_id]
    dep = mine["deployments"][0]
    assert dep["stack_id"] == res.stack_id and dep["stack_name"] == f"vnflcm_{ctx.instance_id}"
    assert [v["id"] for v in dep["vnfcs"]] == [v.id for v in res.vnfcs]
    assert {n["id"] for n in mine["networks"]} >= {net0, "sim-mgmt", "sim-public"}
    master = res.of_vdu("masterNode")[0]
    server = next(s for s in mine["servers"] if s["id"] == master.server_id)
    assert server["status"] == "ACTIVE" and server["ssh_reachable"] is True
    assert server["host_key_fingerprint"].startswith("SHA256:")
    assert server["host_public_key"].startswith("ssh-ed25519 ")
    addrs = [a for entries in server["addresses"].values() for a in entries]
    cp = master.cp("masterNode_CP1")
    expected = {(cp.ip_addresses[0], "fixed"), (cp.floating_ip, "floating")}
    assert {(a["addr"], a["type"]) for a in addrs} == expected
    assert all(a["mac_addr"] == cp.mac_address for a in addrs)
    vol = mine["volumes"][0]
    assert vol["size"] == 5 and vol["status"] == "in-use"
    assert {f["floating_ip_address"] for f in mine["floating_ips"]} == {
        c.floating_ip for v in res.vnfcs for c in v.cps if c.floating_ip
    }
    assert "extras" not in dep
    cloud.update_extras(ctx.instance_id, lambda ex: ex.update(haproxy=["w1"]))
    with_extras = cloud.snapshot(ctx.instance_id, include_extras=True)
    assert with_extras["deployments"][0]["extras"] == {"haproxy": ["w1"]}
    # lookups for twins
    assert cloud.server_by_address(cp.floating_ip)["id"] == master.server_id
    assert cloud.server_by_address(cp.ip_addresses[0])["id"] == master.server_id
    assert cloud.server_by_address("203.0.113.9") is None


def test_extras_update_and_edit():
    cloud = SimCloud(config=FAST)
    assert cloud.extras("i1") == {}
    n = cloud.update_extras("i1", lambda ex: len(ex.setdefault("nodes", {}).setdefault("w1", [])))
    assert n == 0
    with cloud.edit_extras("i1") as ex:
        ex["nodes"]["w2"] = ["etcd"]
    copy_ = cloud.extras("i1")
    copy_["nodes"].clear()  # only a copy
    assert cloud.extras("i1") == {"nodes": {"w1": [], "w2": ["etcd"]}}
