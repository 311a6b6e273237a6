"""The simulated cloud's SQLite store: per-instance documents, shared allocation records, pools,
migration from the old JSON file, crashes during writes, several processes."""

from __future__ import annotations

import ipaddress
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vnfm.adapters.infra.simulator import (
    MemoryStateStore,
    SimCloud,
    SimCloudError,
    SimConfig,
    SimulatorInfraDriver,
    StateStore,
)

FAST = SimConfig(boot_time=0, api_latency=0, delete_time=0)
SMALL = {"masterNode": 1, "workerNode": 2, "storage_server": 0}


def _addresses(state: dict) -> list[str]:
    out = [f["ip_address"] for p in state["ports"].values() for f in p["fixed_ips"]]
    return out + [f["floating_ip_address"] for f in state["floating_ips"].values()]


# ------------------------------------------------------------------------------------ isolation
async def test_one_instance_is_served_without_reading_the_others(tmp_path: Path, make_ctx):
    """Another instance's document is made unreadable: everything about this one still works
    (its operations, snapshot, address look-ups), only the whole-state view reads it and fails."""
    path = tmp_path / "simcloud.db"
    cloud = SimCloud.at(path, FAST)
    driver = SimulatorInfraDriver(cloud)
    mine, other = make_ctx(), make_ctx()
    await driver.deploy(other, SMALL)
    res = await driver.deploy(mine, SMALL)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE deployments SET doc = '{not json' WHERE instance_id = ?", (other.instance_id,))
    with pytest.raises(json.JSONDecodeError):
        cloud.state()
    out = await driver.update(make_ctx(mine.instance_id), {**SMALL, "workerNode": 3}, [])
    assert out.counts()["workerNode"] == 3
    await driver.heal(make_ctx(mine.instance_id), [res.vnfcs[0].id])
    snap = cloud.snapshot(mine.instance_id, include_extras=True)
    assert [d["instance_id"] for d in snap["deployments"]] == [mine.instance_id] and len(snap["servers"]) == 4
    cp = out.of_vdu("workerNode")[2].cps[0]
    assert cloud.server_by_address(cp.floating_ip)["vnfc_id"] == out.of_vdu("workerNode")[2].id
    assert cloud.server_by_address(cp.ip_addresses[0])["vnfc_id"] == out.of_vdu("workerNode")[2].id
    cloud.update_extras(mine.instance_id, lambda ex: ex.update(k8s={"nodes": 3}))
    await driver.undeploy(make_ctx(mine.instance_id))
    assert cloud.deployment(mine.instance_id) is None


# ------------------------------------------------------------------------------------ allocation
async def test_freed_addresses_and_subnets_are_given_again_lowest_first(cloud, driver, make_ctx):
    ctx = make_ctx()
    res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 3, "storage_server": 0})
    w = res.of_vdu("workerNode")
    gone = w[0]
    await driver.update(make_ctx(ctx.instance_id), {"masterNode": 1, "workerNode": 2, "storage_server": 0},
                        [gone.id])
    again = await driver.update(make_ctx(ctx.instance_id), {"masterNode": 1, "workerNode": 3,
                                                            "storage_server": 0}, [])
    new = next(v for v in again.of_vdu("workerNode") if v.id not in res.ids())
    # the lowest free addresses are the ones the removed VNFC had (as a real Neutron may do)
    assert sorted(c.ip_addresses[0] for c in new.cps) == sorted(c.ip_addresses[0] for c in gone.cps)
    assert new.cps[0].floating_ip == gone.cps[0].floating_ip
    internal = {vl.vld_id: vl.cidr for vl in res.virtual_links}["internalVL1"]
    await driver.undeploy(ctx)
    other = await driver.deploy(make_ctx(), SMALL)
    assert {vl.vld_id: vl.cidr for vl in other.virtual_links}["internalVL1"] == internal
    assert len(set(_addresses(cloud.state()))) == len(_addresses(cloud.state()))


@pytest.mark.parametrize(("config", "match"), [
    (SimConfig(boot_time=0, api_latency=0, delete_time=0, public_cidr="172.24.4.0/29"),
     r"no free address left in the floating IP pool \(172.24.4.0/29\): give a larger one in "
     r"SimConfig.public_cidr \(setting VNFM_SIM_PUBLIC_CIDR\)"),
    (SimConfig(boot_time=0, api_latency=0, delete_time=0, mgmt_cidr="10.10.0.0/29"),
     r"no free address left in the management network \(10.10.0.0/29\): give a larger one in "
     r"SimConfig.mgmt_cidr \(setting VNFM_SIM_MGMT_CIDR\)"),
    (SimConfig(boot_time=0, api_latency=0, delete_time=0, internal_pool="10.64.0.0/24"),
     r"no free /24 left in the internal VL pool \(10.64.0.0/24\): give a larger one in "
     r"SimConfig.internal_pool \(setting VNFM_SIM_INTERNAL_POOL\)"),
])
async def test_an_exhausted_pool_names_itself_its_cidr_and_setting(make_ctx, config, match):
    driver = SimulatorInfraDriver(SimCloud(config=config))
    counts = {"masterNode": 1, "workerNode": 1, "storage_server": 1}
    await driver.deploy(make_ctx(links=[]), counts)  # 3 floating IPs, 3 management addresses, 1 /24
    with pytest.raises(SimCloudError, match=match):
        await driver.deploy(make_ctx(links=[]), counts)


async def test_an_external_network_created_on_demand_holds_a_fleet(make_ctx):
    """Tacker's samples name one network (extVirtualLinks[].resourceId) for every cluster: created
    on demand it is a /16 of the external pool (a /24 capped a fleet at ~81 clusters)."""
    cloud = SimCloud(config=SimConfig(boot_time=0, api_latency=0, delete_time=0))
    driver = SimulatorInfraDriver(cloud)
    await driver.deploy(make_ctx(), SMALL)
    (net,) = [n for n in cloud.state()["networks"].values() if n.get("kind") == "external"]
    assert ipaddress.ip_network(net["cidr"]).prefixlen == 16
    assert ipaddress.ip_network(net["cidr"]).subnet_of(ipaddress.ip_network(SimConfig().external_pool))
    small = SimCloud(config=SimConfig(boot_time=0, api_latency=0, delete_time=0, external_prefix=24))
    await SimulatorInfraDriver(small).deploy(make_ctx(), SMALL)  # the size is a setting
    (net,) = [n for n in small.state()["networks"].values() if n.get("kind") == "external"]
    assert ipaddress.ip_network(net["cidr"]).prefixlen == 24


async def test_widening_a_pool_takes_effect_on_the_existing_network(tmp_path: Path, make_ctx):
    path = tmp_path / "simcloud.db"
    narrow = SimConfig(boot_time=0, api_latency=0, delete_time=0, public_cidr="172.24.4.0/29")
    ctx = make_ctx()
    with pytest.raises(SimCloudError, match="floating IP pool"):
        await SimulatorInfraDriver(SimCloud.at(path, narrow)).deploy(ctx, {**SMALL, "workerNode": 5})
    wide = SimConfig(boot_time=0, api_latency=0, delete_time=0, public_cidr="172.24.4.0/24")
    cloud = SimCloud.at(path, wide)  # a restart with a larger pool: the retry converges
    res = await SimulatorInfraDriver(cloud).deploy(ctx, {**SMALL, "workerNode": 5})
    fips = [c.floating_ip for v in res.vnfcs for c in v.cps if c.floating_ip]
    assert len(fips) == 6 == len(set(fips))
    assert all(ipaddress.ip_address(a) in ipaddress.ip_network("172.24.4.0/24") for a in fips)
    assert cloud.state()["networks"]["sim-public"]["cidr"] == "172.24.4.0/24"


# ------------------------------------------------------------------------------------ processes
def test_processes_deploying_at_once_never_share_an_address(tmp_path: Path):
    path = tmp_path / "simcloud.db"
    script = textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import make_ctx
        from vnfm.adapters.infra.simulator import SimCloud, SimConfig, SimulatorInfraDriver
        cloud = SimCloud.at({str(path)!r}, SimConfig(boot_time=0, api_latency=0, delete_time=0))
        async def main():
            for _ in range(4):
                await SimulatorInfraDriver(cloud).deploy(make_ctx(links=[]), {SMALL!r})
        asyncio.run(main())
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script]) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    state = SimCloud.at(path).state()
    assert len(state["deployments"]) == 12
    addresses = _addresses(state)
    assert len(addresses) == 12 * 3 * 2 + 12 * 2  # fixed + floating per VNFC, internal VL per worker
    assert len(set(addresses)) == len(addresses)
    macs = [p["mac_address"] for p in state["ports"].values()]
    assert len(set(macs)) == len(macs)


def test_a_writer_killed_mid_write_leaves_a_consistent_store_and_no_stray_file(tmp_path: Path):
    path = tmp_path / "simcloud.db"
    script = textwrap.dedent(f"""
        from vnfm.adapters.infra.simulator import SimCloud
        cloud = SimCloud.at({str(path)!r})
        def bump(ex):
            ex["n"] = ex.get("n", 0) + 1
            ex["copy"] = ex["n"]
            ex["ballast"] = "x" * 200000  # a write that takes a while
        while True:
            cloud.update_extras("counter", bump)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60
    while (SimCloud.at(path).extras("counter").get("n") or 0) < 20:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    after = SimCloud.at(path)
    extras = after.extras("counter")
    assert extras["n"] == extras["copy"] >= 20  # the last commit, whole
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    after.update_extras("counter", lambda ex: ex.update(n=ex["n"] + 1))
    assert {p.name for p in tmp_path.iterdir()} <= {"simcloud.db", "simcloud.db-wal", "simcloud.db-shm"}
    assert all(p.stat().st_mode & 0o077 == 0 for p in tmp_path.iterdir())  # owner-only files


def test_leftover_temporary_files_of_the_json_store_are_removed_on_start(tmp_path: Path):
    kept = tmp_path / "notes.tmp"
    kept.write_text("not ours")
    stray = [tmp_path / ".simcloud.json.k2j4l1x0.tmp", tmp_path / ".simcloud.json.a8b7c6d5.tmp"]
    for p in stray:
        p.write_text('{"half": ')
    SimCloud.at(tmp_path / "simcloud.db")
    assert not any(p.exists() for p in stray) and kept.exists()


# ------------------------------------------------------------------------------------ migration
async def test_the_old_json_state_file_is_imported_once(tmp_path: Path, make_ctx):
    old = MemoryStateStore()
    driver = SimulatorInfraDriver(SimCloud(old, FAST))
    ctx = make_ctx()
    res = await driver.deploy(ctx, SMALL)
    await driver.reserve_address(ctx, "masterNode_CP1", "control-plane-vip")
    SimCloud(old, FAST).update_extras(ctx.instance_id, lambda ex: ex.update(k8s={"nodes": ["m0"]}))
    legacy = old.read()
    json_path = tmp_path / "simcloud.json"
    json_path.write_text(json.dumps({"schema": 1, **legacy}))

    cloud = SimCloud.at(tmp_path / "simcloud.db", FAST, migrate_from=json_path)
    assert not json_path.exists() and (tmp_path / "simcloud.json.migrated").exists()
    assert cloud.snapshot(ctx.instance_id, include_extras=True) == SimCloud(old).snapshot(
        ctx.instance_id, include_extras=True)
    master = res.of_vdu("masterNode")[0]
    assert cloud.server_by_address(master.cps[0].floating_ip)["id"] == master.server_id
    # the imported addresses are taken: a new deployment gets others
    more = await SimulatorInfraDriver(cloud).deploy(make_ctx(), SMALL)
    state = cloud.state()
    assert len(set(_addresses(state))) == len(_addresses(state))
    assert not {a for v in more.vnfcs for c in v.cps for a in c.ip_addresses} & set(_addresses(legacy))
    # a second start (or another process) imports nothing again
    json_path.write_text(json.dumps(legacy))
    again = SimCloud.at(tmp_path / "simcloud.db", FAST, migrate_from=json_path)
    assert len(again.state()["deployments"]) == 2


def test_memory_store_initial_state_and_whole_state_interface():
    seeded = MemoryStateStore({"extras": {"i1": {"a": 1}}, "faults": {"fail_delete": 2}})
    assert seeded.read()["extras"] == {"i1": {"a": 1}}
    assert SimCloud(seeded).faults().fail_delete == 2
    with seeded.transaction() as state:
        state["extras"]["i2"] = {"b": 2}
    assert SimCloud(seeded).extras("i2") == {"b": 2}


def test_a_transaction_begun_inside_another_joins_it():
    store = StateStore(":memory:")
    with pytest.raises(RuntimeError), store.begin() as outer:
        outer.extras("i1", create=True)
        with store.begin() as inner:
            assert inner is outer
        raise RuntimeError("boom")
    assert store.read()["extras"] == {}
    with pytest.raises(RuntimeError, match="cannot join a read"), store.begin(write=False), store.begin():
        pass


def test_the_composition_root_opens_the_data_dir_store_and_imports_the_old_file(tmp_path: Path):
    from vnfm.bootstrap import default_sim_cloud
    from vnfm.config import Settings

    (tmp_path / "simcloud.json").write_text(json.dumps({"networks": {"n1": {
        "id": "n1", "name": "n1", "kind": "external", "cidr": "10.99.0.0/24", "subnet_id": "s1",
        "gateway_ip": "10.99.0.1", "instance_id": None, "status": "ACTIVE", "created_at": "t"}}}))
    cloud = default_sim_cloud(Settings(data_dir=tmp_path, sim_boot_time=0.25, sim_step_time=0.125))
    assert cloud.state()["networks"]["n1"]["cidr"] == "10.99.0.0/24"
    assert (cloud.config.boot_time, cloud.config.api_latency) == (0.25, 0.125)
    assert (tmp_path / "simcloud.db").is_file() and (tmp_path / "simcloud.json.migrated").is_file()
