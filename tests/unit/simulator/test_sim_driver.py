"""SimulatorInfraDriver: deploy, scale, heal, undeploy on the simulated cloud."""

from __future__ import annotations

import ipaddress
import time

import pytest

from vnfm.adapters.infra.simulator import (
    MGMT_NETWORK_ID,
    SimCloud,
    SimConfig,
    SimulatorInfraDriver,
)
from vnfm.domain.errors import NotFound, UnprocessableEntity
from vnfm.domain.resources import VnfResources


def _all_addresses(res: VnfResources) -> list[str]:
    out: list[str] = []
    for v in res.vnfcs:
        for cp in v.cps:
            out.extend(cp.ip_addresses)
            if cp.floating_ip:
                out.append(cp.floating_ip)
    return out


# ------------------------------------------------------------------------------------ deploy
async def test_deploy_creates_counts_per_vdu(driver, cloud, make_ctx, counts):
    msgs: list[str] = []
    ctx = make_ctx(messages=msgs)
    res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 3, "storage_server": 1})

    assert res.counts() == {"masterNode": 1, "workerNode": 3, "storage_server": 1}
    assert res.stack_id and res.stack_id == cloud.deployment(ctx.instance_id)["stack_id"]
    assert [v.name for v in res.of_vdu("workerNode")] == ["workerNode-0", "workerNode-1", "workerNode-2"]
    assert sorted(v.seq for v in res.vnfcs) == list(range(5))
    assert len(res.ids()) == 5
    for v in res.vnfcs:
        assert v.resource_type == "OS::Nova::Server"
        assert v.created_at
        server = cloud.server(v.server_id)
        assert server is not None and server["status"] == "ACTIVE" and server["name"] == v.name
        assert v.metadata["host_key_fingerprint"].startswith("SHA256:")
    worker = res.of_vdu("workerNode")[0]
    assert [cp.cpd_id for cp in worker.cps] == ["workerNode_CP2", "workerNode_CP3"]
    assert cloud.server(worker.server_id)["flavor"] == {"name": "sim.2vcpu.4096mb", "vcpus": 2, "ram": 4096}
    # storage from the VirtualStorage
    storage = res.of_vdu("storage_server")[0]
    assert len(storage.storages) == 1 and storage.storages[0].size_gb == 5
    vol = cloud.state()["volumes"][storage.storages[0].volume_id]
    assert vol["status"] == "in-use" and vol["attached_to"] == storage.server_id and vol["size"] == 5
    # internal VLs: one network per VL of the flavour (cidr from the VNFD when given)
    vls = {vl.vld_id: vl for vl in res.virtual_links}
    assert set(vls) == {"internalVL1", "internalVL2"}
    assert vls["internalVL2"].cidr == "192.168.100.0/24"
    assert cloud.snapshot(ctx.instance_id)["deployments"][0]["status"] == "CREATE_COMPLETE"
    assert any("ACTIVE" in m for m in msgs) and any("created" in m for m in msgs)


async def test_addresses_and_macs_are_unique_and_in_their_subnets(driver, cloud, make_ctx):
    ctx1, ctx2 = make_ctx(), make_ctx()
    r1 = await driver.deploy(ctx1, {"masterNode": 3, "workerNode": 6, "storage_server": 1})
    r2 = await driver.deploy(ctx2, {"masterNode": 1, "workerNode": 4, "storage_server": 1})
    addresses = _all_addresses(r1) + _all_addresses(r2)
    # master: fixed + floating; worker: fixed + floating + internal fixed; storage: fixed + floating
    assert len(addresses) == (3 * 2 + 6 * 3 + 2) + (1 * 2 + 4 * 3 + 2)
    assert len(addresses) == len(set(addresses)), "an address was given twice"
    macs = [cp.mac_address for r in (r1, r2) for v in r.vnfcs for cp in v.cps]
    assert all(macs) and len(macs) == len(set(macs))
    nets = cloud.state()["networks"]
    for r in (r1, r2):
        for v in r.vnfcs:
            for cp in v.cps:
                cidr = ipaddress.ip_network(nets[cp.network_id]["cidr"])
                assert ipaddress.ip_address(cp.ip_addresses[0]) in cidr


async def test_external_cps_get_floating_ips_and_ext_networks(driver, cloud, make_ctx, net0, counts):
    ctx = make_ctx()
    res = await driver.deploy(ctx, counts)
    pool = ipaddress.ip_network(cloud.config.public_cidr)
    master = res.of_vdu("masterNode")[0]
    cp1 = master.cp("masterNode_CP1")
    assert cp1.network_id == net0 and cp1.ext_virtual_link_id == "net0_master"
    assert cp1.virtual_link_id is None
    assert ipaddress.ip_address(cp1.floating_ip) in pool
    assert master.address("masterNode_CP1") == cp1.floating_ip
    assert master.address("masterNode_CP1", floating_first=False) == cp1.ip_addresses[0]
    assert master.metadata["floating_ip_resources"]["masterNode_FloatingIP"] == cp1.floating_ip

    for worker in res.of_vdu("workerNode"):
        ext, internal = worker.cp("workerNode_CP2"), worker.cp("workerNode_CP3")
        assert ext.network_id == net0 and ext.ext_virtual_link_id == "net0_worker" and ext.floating_ip
        assert internal.floating_ip is None and internal.ext_virtual_link_id is None
        assert internal.virtual_link_id == "internalVL1"
        assert internal.network_id == {vl.vld_id: vl for vl in res.virtual_links}["internalVL1"].network_id

    # an external CP not named in extVirtualLinks lands on the management network
    st = res.of_vdu("storage_server")[0].cp("storage_server_CP")
    assert st.network_id == MGMT_NETWORK_ID and st.ext_virtual_link_id is None and st.floating_ip
    assert ipaddress.ip_address(st.ip_addresses[0]) in ipaddress.ip_network("10.10.0.0/16")

    nets = cloud.state()["networks"]
    assert ipaddress.ip_network(nets[net0]["cidr"]).prefixlen == 16  # created on demand, sized for a fleet
    assert nets[MGMT_NETWORK_ID]["cidr"] == "10.10.0.0/16"
    # the request's network is shared by both ext VLs: one network, distinct ports
    assert len({cp.port_id for v in res.vnfcs for cp in v.cps}) == 1 + 2 * 2 + 1


async def test_existing_network_and_fixed_address_from_request(driver, cloud, make_ctx, ext_links, net0):
    cloud.create_network("net0", "10.10.0.0/24", network_id=net0)
    ctx = make_ctx(links=ext_links(fixed_master="10.10.0.77"))
    res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 1, "storage_server": 0})
    assert res.of_vdu("masterNode")[0].cp("masterNode_CP1").ip_addresses == ["10.10.0.77"]
    worker_ip = res.of_vdu("workerNode")[0].cp("workerNode_CP2").ip_addresses[0]
    assert ipaddress.ip_address(worker_ip) in ipaddress.ip_network("10.10.0.0/24")


async def test_deploy_twice_duplicates_nothing(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    first = await driver.deploy(ctx, counts)
    snap1 = cloud.snapshot()
    again = await driver.deploy(ctx, counts)
    snap2 = cloud.snapshot()
    assert again.to_dict() == first.to_dict()
    for key in ("networks", "ports", "floating_ips", "servers", "volumes", "deployments"):
        assert len(snap2[key]) == len(snap1[key]), key
    assert [s["id"] for s in snap2["servers"]] == [s["id"] for s in snap1["servers"]]


async def test_deploy_completes_to_bigger_counts_and_refuses_to_guess_removals(driver, make_ctx, counts):
    ctx = make_ctx()
    first = await driver.deploy(ctx, counts)
    more = await driver.deploy(ctx, {**counts, "workerNode": 4})
    assert more.counts()["workerNode"] == 4 and first.ids() < more.ids()
    with pytest.raises(UnprocessableEntity, match="workerNode"):
        await driver.deploy(ctx, {**counts, "workerNode": 1})
    with pytest.raises(UnprocessableEntity, match="nosuchvdu"):
        await driver.deploy(ctx, {"nosuchvdu": 1})


# ------------------------------------------------------------------------------------ scale
async def test_scale_out_then_in_exact_ids(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    base = await driver.deploy(ctx, counts)
    out = await driver.update(ctx, {**counts, "workerNode": 5}, [])
    new = [v for v in out.of_vdu("workerNode") if v.id not in base.ids()]
    assert len(new) == 3
    assert min(v.seq for v in new) > max(v.seq for v in base.vnfcs)
    assert {v.id for v in base.vnfcs} <= out.ids()

    # remove two chosen VNFCs that are NOT the newest
    workers = out.of_vdu("workerNode")
    remove = [workers[0].id, workers[3].id]
    gone_servers = {workers[0].server_id, workers[3].server_id}
    gone_ports = {cp.port_id for w in (workers[0], workers[3]) for cp in w.cps}
    after = await driver.update(ctx, {**counts, "workerNode": 3}, remove)
    assert after.ids() == out.ids() - set(remove)
    state = cloud.state()
    assert not gone_servers & set(state["servers"]) and not gone_ports & set(state["ports"])

    # re-applying the same call is a no-op
    again = await driver.update(ctx, {**counts, "workerNode": 3}, remove)
    assert again.to_dict() == after.to_dict()


async def test_scale_in_rejects_mismatched_remove(driver, make_ctx, counts):
    ctx = make_ctx()
    res = await driver.deploy(ctx, {**counts, "workerNode": 3})
    workers = res.of_vdu("workerNode")
    master = res.of_vdu("masterNode")[0]
    with pytest.raises(UnprocessableEntity, match=workers[0].id):  # shrink by 2, one id given
        await driver.update(ctx, {**counts, "workerNode": 1}, [workers[0].id])
    with pytest.raises(UnprocessableEntity, match="removes 0"):  # no shrink, but an id given
        await driver.update(ctx, {**counts, "workerNode": 3}, [workers[1].id])
    with pytest.raises(UnprocessableEntity, match="nope-1"):
        await driver.update(ctx, {**counts, "workerNode": 2}, ["nope-1"])
    with pytest.raises(UnprocessableEntity, match=master.id):  # id of another VDU
        await driver.update(ctx, {**counts, "workerNode": 2}, [master.id])
    assert (await driver.current(ctx)).to_dict() == res.to_dict()  # nothing changed
    with pytest.raises(NotFound):
        await driver.update(make_ctx(), counts, [])


# ------------------------------------------------------------------------------------ heal
async def test_heal_replaces_server_keeping_ids_ports_addresses_and_volume(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    res = await driver.deploy(ctx, counts)
    target = res.of_vdu("storage_server")[0]
    other = res.of_vdu("workerNode")[0]
    old_key = cloud.server(target.server_id)["host_key"]["fingerprint"]

    heal_ctx = make_ctx(ctx.instance_id)
    healed = await driver.heal(heal_ctx, [target.id])
    after = healed.by_id(target.id)
    assert after is not None and after.seq == target.seq and after.name == target.name
    assert after.server_id != target.server_id
    assert cloud.server(target.server_id) is None
    new_server = cloud.server(after.server_id)
    assert new_server["status"] == "ACTIVE" and new_server["host_key"]["fingerprint"] != old_key
    assert [(c.id, c.port_id, c.ip_addresses, c.mac_address, c.floating_ip) for c in after.cps] == [
        (c.id, c.port_id, c.ip_addresses, c.mac_address, c.floating_ip) for c in target.cps
    ]
    assert after.storages == target.storages  # same volume (keep_storage)
    assert cloud.state()["volumes"][after.storages[0].volume_id]["attached_to"] == after.server_id
    assert cloud.state()["ports"][after.cps[0].port_id]["device_id"] == after.server_id
    assert healed.by_id(other.id).server_id == other.server_id  # others untouched

    # the same operation again (a retry) does not replace a second time
    again = await driver.heal(heal_ctx, [target.id])
    assert again.by_id(target.id).server_id == after.server_id


async def test_heal_without_keeping_storage_replaces_volume(driver, cloud, make_ctx, counts):
    ctx = make_ctx()
    res = await driver.deploy(ctx, counts)
    target = res.of_vdu("storage_server")[0]
    healed = (await driver.heal(make_ctx(ctx.instance_id), [target.id], keep_storage=False)).by_id(target.id)
    assert healed.storages[0].id == target.storages[0].id
    assert healed.storages[0].volume_id != target.storages[0].volume_id
    vols = cloud.state()["volumes"]
    assert target.storages[0].volume_id not in vols
    assert vols[healed.storages[0].volume_id]["size"] == 5


async def test_heal_unknown_ids_are_named(driver, make_ctx, counts):
    ctx = make_ctx()
    res = await driver.deploy(ctx, counts)
    with pytest.raises(UnprocessableEntity, match="ghost-a.*ghost-b"):
        await driver.heal(ctx, [res.vnfcs[0].id, "ghost-a", "ghost-b"])
    assert (await driver.current(ctx)).to_dict() == res.to_dict()


# ------------------------------------------------------------------------------------ undeploy
async def test_undeploy_then_again(driver, cloud, make_ctx, counts):
    keep = make_ctx()
    await driver.deploy(keep, counts)
    ctx = make_ctx()
    await driver.deploy(ctx, counts)
    cloud.update_extras(ctx.instance_id, lambda ex: ex.update(nodes=["a"]))
    await driver.undeploy(ctx)
    snap = cloud.snapshot(ctx.instance_id)
    for key in ("ports", "floating_ips", "servers", "volumes", "deployments"):
        assert snap[key] == [], key
    assert all(n["kind"] != "internal" for n in snap["networks"])
    assert cloud.extras(ctx.instance_id) == {}
    assert (await driver.current(ctx)).vnfcs == []
    await driver.undeploy(ctx)  # already gone: no error
    # the other instance and the shared networks are intact
    assert (await driver.current(keep)).counts() == counts
    assert MGMT_NETWORK_ID in cloud.state()["networks"]


# ------------------------------------------------------------------------------------ timing
async def test_servers_boot_in_parallel(make_ctx):
    cloud = SimCloud(config=SimConfig(boot_time=0.2, api_latency=0.001, delete_time=0))
    driver = SimulatorInfraDriver(cloud)
    ctx = make_ctx()
    start = time.monotonic()
    res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 8, "storage_server": 1})
    elapsed = time.monotonic() - start
    assert len(res.vnfcs) == 10
    assert 0.2 <= elapsed < 1.5, f"10 servers took {elapsed:.2f}s"


# ------------------------------------------------------------------------------------ transactions
async def _deploy_counted(make_ctx, monkeypatch, boot_time: float) -> tuple[int, list[str], list[str]]:
    """Deploy 1 master + 2 workers: (the cloud's transactions, statuses set, progress lines)."""
    from vnfm.adapters.infra.simulator.store import StateStore

    cloud = SimCloud(config=SimConfig(boot_time=boot_time, api_latency=0, delete_time=0))
    seen = [0]
    acquire = StateStore._acquire

    def counted(self: StateStore, *a: object, **kw: object) -> object:
        seen[0] += 1
        return acquire(self, *a, **kw)

    monkeypatch.setattr(StateStore, "_acquire", counted)
    statuses: list[str] = []
    set_status = cloud.set_deployment_status

    def recorded(iid: str, status: str, reason: str = "") -> None:
        statuses.append(status)
        set_status(iid, status, reason)

    monkeypatch.setattr(cloud, "set_deployment_status", recorded)
    lines: list[str] = []
    ctx = make_ctx(messages=lines)
    await SimulatorInfraDriver(cloud).deploy(ctx, {"masterNode": 1, "workerNode": 2, "storage_server": 0})
    state = cloud.instance_state(ctx.instance_id)
    assert [s["status"] for s in state["servers"].values()] == ["ACTIVE"] * 3
    assert all(p["status"] == "ACTIVE" for p in state["ports"].values() if p["device_id"])
    assert state["deployments"][ctx.instance_id]["status"] == "CREATE_COMPLETE"
    monkeypatch.setattr(StateStore, "_acquire", acquire)
    return seen[0], statuses, lines


async def test_a_boot_that_takes_no_time_ends_in_the_create_transaction(make_ctx, monkeypatch):
    """With boot_time 0 nothing can see a server in BUILD (no wait between create and boot): the
    create's transaction ends the BUILD (3 servers: 3 transactions fewer, no "building" line).
    With a boot time, BUILD is seen and ended by `finish_boot` as before. A fresh stack is
    CREATE_IN_PROGRESS from its creation: no second write of that status either way."""
    slow_tx, slow_statuses, slow_lines = await _deploy_counted(make_ctx, monkeypatch, 0.01)
    fast_tx, fast_statuses, fast_lines = await _deploy_counted(make_ctx, monkeypatch, 0.0)
    assert slow_statuses == fast_statuses == ["CREATE_COMPLETE"]
    assert len([m for m in slow_lines if m.endswith(" building")]) == 3
    assert [m for m in fast_lines if m.endswith(" building")] == []
    assert fast_tx == slow_tx - 3


async def test_an_injected_build_fault_still_ends_in_error_when_the_boot_takes_no_time(make_ctx, cloud):
    cloud.inject(fail_build={"workerNode": 1}, build_message="No valid host was found")
    ctx = make_ctx()
    with pytest.raises(Exception, match="No valid host"):
        await SimulatorInfraDriver(cloud).deploy(ctx, {"masterNode": 1, "workerNode": 2, "storage_server": 0})
    state = cloud.instance_state(ctx.instance_id)
    errors = [s for s in state["servers"].values() if s["status"] == "ERROR"]
    assert len(errors) == 1 and errors[0]["fault"]["message"] == "No valid host was found"
    assert state["deployments"][ctx.instance_id]["status"] == "CREATE_FAILED"
    await SimulatorInfraDriver(cloud).deploy(ctx, {"masterNode": 1, "workerNode": 2, "storage_server": 0})
    state = cloud.instance_state(ctx.instance_id)  # the retry replaces it
    assert [s["status"] for s in state["servers"].values()] == ["ACTIVE"] * 3


async def test_the_new_vnfcs_of_every_vdu_are_recorded_in_one_transaction(make_ctx, cloud, monkeypatch):
    """A deploy's VNFCs of all VDUs are one write (Heat: one stack create / update), made after
    the networks their CPs need."""
    txs: list[int] = []
    add = cloud.add_vnfcs

    def recorded(*a: object, **kw: object) -> list[str]:
        tx = getattr(cloud.store._local, "tx", None)
        txs.append(id(tx) if tx is not None else 0)
        return add(*a, **kw)

    monkeypatch.setattr(cloud, "add_vnfcs", recorded)
    ctx = make_ctx()
    await SimulatorInfraDriver(cloud).deploy(ctx, {"masterNode": 1, "workerNode": 2, "storage_server": 1})
    assert len(txs) == 3 and 0 not in txs and len(set(txs)) == 1
    vnfcs = cloud.deployment(ctx.instance_id)["vnfcs"]
    assert sorted(v["vdu_id"] for v in vnfcs.values()) == ["masterNode", "storage_server", "workerNode", "workerNode"]


async def test_a_deploy_converges_from_the_stack_it_ensured(make_ctx, cloud, monkeypatch, counts):
    """deploy hands `_converge` the deployment `ensure_deployment` returned (no read of its own);
    update, which wrote the status since its read, still has `_converge` read it."""
    import sys

    callers: list[str] = []
    deployment = cloud.deployment

    def counted(iid: str) -> object:
        callers.append(sys._getframe(1).f_code.co_name)
        return deployment(iid)

    monkeypatch.setattr(cloud, "deployment", counted)
    driver = SimulatorInfraDriver(cloud)
    ctx = make_ctx()
    await driver.deploy(ctx, counts)
    assert callers.count("deploy") == 1 and "_converge" not in callers
    callers.clear()
    await driver.update(ctx, {**counts, "workerNode": 3}, [])
    assert callers.count("_converge") == 1
    assert len(deployment(ctx.instance_id)["vnfcs"]) == sum(counts.values()) + 1
