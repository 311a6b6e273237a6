"""What the simulated cloud's operations hand out and stamp: records the caller owns (the record
itself when the operation's transaction ended with it, a copy when it joined an open one: the
record is still live there), timestamps in one format."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from vnfm.adapters.infra.simulator import SimCloud, SimConfig, SimulatorInfraDriver
from vnfm.adapters.infra.simulator.model import now_iso
from vnfm.adapters.infra.simulator.store import StateStore

SMALL = {"masterNode": 1, "workerNode": 2, "storage_server": 0}


def test_timestamps_are_utc_with_microseconds_and_follow_the_clock(monkeypatch):
    before = datetime.now(UTC)
    text = now_iso()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", text)
    stamped = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before - timedelta(microseconds=1) <= stamped <= after
    ticks = iter([1_700_000_000.000001, 1_700_000_000.5, 1_700_000_001.25, 1_699_999_999.999999])
    monkeypatch.setattr("vnfm.adapters.infra.simulator.model.time.time", lambda: next(ticks))
    assert [now_iso() for _ in range(4)] == ["2023-11-14T22:13:20.000001Z", "2023-11-14T22:13:20.500000Z",
                                             "2023-11-14T22:13:21.250000Z", "2023-11-14T22:13:19.999999Z"]


async def test_what_an_operation_returns_is_the_callers_own(cloud, make_ctx):
    ctx = make_ctx()
    await SimulatorInfraDriver(cloud).deploy(ctx, SMALL)
    vnfc_id = next(iter(cloud.deployment(ctx.instance_id)["vnfcs"]))
    cpd_id = next(iter(cloud.deployment(ctx.instance_id)["vnfcs"][vnfc_id]["cps"]))
    port, created = cloud.ensure_port(ctx.instance_id, vnfc_id, cpd_id)
    assert created is False
    port["fixed_ips"][0]["ip_address"] = "CHANGED"
    net = cloud.ensure_mgmt_network()
    net["cidr"] = "CHANGED"
    server = cloud.finish_boot(cloud.deployment(ctx.instance_id)["vnfcs"][vnfc_id]["server_id"])
    server["host_key"]["public_key"] = "CHANGED"
    assert server["status"] == "ACTIVE"
    state = cloud.instance_state(ctx.instance_id)
    assert state["ports"][port["id"]]["fixed_ips"][0]["ip_address"] != "CHANGED"
    assert state["servers"][server["id"]]["host_key"]["public_key"].startswith("ssh-ed25519 ")
    assert cloud.ensure_mgmt_network()["cidr"] == cloud.config.mgmt_cidr
    with cloud.atomic():  # joined: what they return must not be the transaction's live records
        port, _ = cloud.ensure_port(ctx.instance_id, vnfc_id, cpd_id)
        port["fixed_ips"][0]["ip_address"] = "CHANGED"
        cloud.ensure_mgmt_network()["cidr"] = "CHANGED"
        cloud.finish_boot(server["id"])["host_key"]["public_key"] = "CHANGED"
        cloud.set_reachable(server["id"], True)["name"] = "CHANGED"
        cloud.ensure_deployment(ctx.instance_id, "simple", "vnfd")["status"] = "CHANGED"
    state = cloud.instance_state(ctx.instance_id)
    assert state["ports"][port["id"]]["fixed_ips"][0]["ip_address"] != "CHANGED"
    assert state["servers"][server["id"]]["host_key"]["public_key"].startswith("ssh-ed25519 ")
    assert state["servers"][server["id"]]["name"] != "CHANGED"
    assert state["deployments"][ctx.instance_id]["status"] != "CHANGED"
    assert cloud.ensure_mgmt_network()["cidr"] == cloud.config.mgmt_cidr


def test_the_management_network_is_read_when_it_is_there_and_widened_when_the_setting_grows(tmp_path, monkeypatch):
    path = tmp_path / "s.db"
    narrow = SimCloud.at(path, SimConfig(boot_time=0, api_latency=0, delete_time=0, mgmt_cidr="10.10.0.0/24"))
    assert narrow.ensure_mgmt_network()["cidr"] == "10.10.0.0/24"  # created
    writes: list[bool] = []
    begin = StateStore.begin

    def counted(self: StateStore, *, write: bool = True) -> Any:
        writes.append(write)
        return begin(self, write=write)

    monkeypatch.setattr(StateStore, "begin", counted)
    assert narrow.ensure_mgmt_network()["cidr"] == "10.10.0.0/24"
    assert writes == [False]  # there as configured: no write lock taken
    wide = SimCloud.at(path, SimConfig(boot_time=0, api_latency=0, delete_time=0, mgmt_cidr="10.10.0.0/16"))
    assert wide.ensure_mgmt_network()["cidr"] == "10.10.0.0/16"  # widened: a write
    assert writes == [False, False, True]
    assert wide.state()["networks"]["sim-mgmt"]["cidr"] == "10.10.0.0/16"
