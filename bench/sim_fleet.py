"""Instantiate cost against the size of the fleet already deployed (a benchmark: prints figures).

In one process, through `vnfm.bootstrap.build` (SQLite database, simulated cloud persisted in the
data dir, zero latency, the real Kubernetes management driver on the simulated cloud's twin):
onboard the example package, instantiate one seed VNF (1 master + 2 workers), then make the fleet
`N` VNFs big by cloning the seed (its deployment, ports, floating IPs, servers, volumes and twin
state in the simulated cloud with fresh ids and addresses, and its instance row in the database),
and measure the server-side cost of instantiating one more: from `InstanceService.instantiate`
until the occurrence is COMPLETED (wall and CPU time of the process; nothing else runs in it).

Issue 17's target: the cost at 1,000 VNFs within 1.2x of the cost at 0.

    .venv/bin/python bench/sim_fleet.py [--sizes 0,100,1000] [--big] [--runs 3]

`--big` adds 5,000. A size counts the seed (0 and 1 are the same fleet: the seed alone). CPU time
is the steadier figure on a shared machine. The simulated floating-IP pool is a /16 here.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import ipaddress
import json
import logging
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from vnfm.adapters.infra.simulator import SimCloud, SimConfig
from vnfm.adapters.infra.simulator.driver import resources_of
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.domain.model import InstantiationState, OpState
from vnfm.examples import example_csar

TARGET = 1.2
BODY: dict[str, Any] = {
    "flavourId": "simple",
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "script_path": "Scripts/install_k8s_cluster.sh",
            "vim_name": "kubernetes_vim",
            "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1",
                            "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "bench-pw",
                            "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24",
                            "cluster_cp_name": "masterNode_CP1"},
            "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                            "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "bench-pw"},
        }
    },
}
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SECTIONS = ("ports", "floating_ips", "servers", "volumes")


def open_cloud(data_dir: Path) -> SimCloud:
    config = SimConfig(boot_time=0, api_latency=0, delete_time=0, public_cidr="172.24.0.0/16")
    return SimCloud.at(data_dir / "simcloud.db", config)


@asynccontextmanager
async def bench_app(data_dir: Path, cloud: SimCloud | None = None) -> AsyncIterator[tuple[App, str]]:
    """The in-process benches' set-up: vnfm in `data_dir` (SQLite) on the zero-latency simulated
    cloud (`cloud`, else `open_cloud`), no HTTP, no notifier, the health watcher off (its rounds are
    not an instantiate's cost), the example package onboarded. Yields the app and the VNFD id; the
    app is stopped on leaving."""
    settings = Settings(data_dir=data_dir, probe_callbacks=False, sim_boot_time=0, sim_step_time=0, auth_token="",
                        health_interval=0)
    app = build(settings, sim=cloud or open_cloud(data_dir), notifier=None)
    await app.start()
    try:
        pkg = app.packages.upload(app.packages.create({}).id, example_csar())
        yield app, str(pkg.vnfd_id)
    finally:
        await app.stop()


async def wait(app: App, op_id: str, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        task = app.engine.running.get(op_id)
        if task is not None and not task.done():  # no poll while it runs: waiting costs no CPU of its own
            await asyncio.wait([task])
            continue
        occ = app.instances.op_get(op_id)
        if occ.operation_state not in (OpState.STARTING, OpState.PROCESSING) and op_id not in app.engine.running:
            if occ.operation_state != OpState.COMPLETED:
                raise SystemExit(f"instantiate ended {occ.operation_state}: {json.dumps(occ.error)}")
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"instantiate {op_id} still {occ.operation_state} after {timeout} s")
        await asyncio.sleep(0.002)


async def instantiate(app: App, vnfd_id: str) -> tuple[str, float, float]:
    """(instance id, wall seconds, CPU seconds) of one instantiate, server-side."""
    inst = app.instances.create({"vnfdId": vnfd_id})
    w0, c0 = time.perf_counter(), time.process_time()
    occ = app.instances.instantiate(inst.id, copy.deepcopy(BODY))
    await wait(app, occ.id)
    return inst.id, time.perf_counter() - w0, time.process_time() - c0


# ------------------------------------------------------------------------------------ cloning
def _addresses(cidr: str, used: set[str]) -> Iterator[str]:
    for host in list(ipaddress.ip_network(cidr).hosts())[10:]:
        if str(host) not in used:
            used.add(str(host))
            yield str(host)


def _seed_part(state: dict[str, Any], seed: str) -> dict[str, Any]:
    part: dict[str, Any] = {s: {k: v for k, v in state[s].items() if v.get("instance_id") == seed} for s in SECTIONS}
    part["networks"] = {k: v for k, v in state["networks"].items() if v.get("instance_id") == seed}
    part["deployment"] = state["deployments"][seed]
    part["extras"] = state["extras"].get(seed, {})
    return part


def clone_fleet(cloud: SimCloud, seed: str, n: int) -> list[str]:
    """Add `n` copies of the seed's part of the simulated cloud (one transaction); their ids."""
    if n == 0:
        return []
    with cloud.store.transaction() as state:
        part = _seed_part(state, seed)
        text = json.dumps(part)
        shared = {i for net in state["networks"].values() if net.get("instance_id") != seed
                  for i in (net["id"], net["subnet_id"])}
        shared.add(part["deployment"].get("vnfd_id"))
        ids = sorted({m for m in UUID_RE.findall(text) if m not in shared})
        seed_addrs: dict[str, str] = {}  # address -> cidr of its network
        for port in part["ports"].values():
            cidr = state["networks"][port["network_id"]]["cidr"]
            seed_addrs.update({f["ip_address"]: cidr for f in port["fixed_ips"]})
        for fip in part["floating_ips"].values():
            seed_addrs[fip["floating_ip_address"]] = state["networks"][fip["floating_network_id"]]["cidr"]
        internal = {net["cidr"] for net in part["networks"].values()}
        used: set[str] = set()
        for p in state["ports"].values():
            used.update(f["ip_address"] for f in p["fixed_ips"])
        used.update(f["floating_ip_address"] for f in state["floating_ips"].values())
        pools = {cidr: _addresses(cidr, used) for cidr in set(seed_addrs.values()) - internal}
        addr_re = re.compile(r"(?<![\d.])(" + "|".join(re.escape(a) for a in seed_addrs) + r")(?![\d])")
        id_re = re.compile("|".join(ids))
        new_ids: list[str] = []
        for _ in range(n):
            id_map = {i: str(uuid.uuid4()) for i in ids}
            addr_map = {a: (next(pools[c]) if c in pools else a) for a, c in seed_addrs.items()}
            copy_text = addr_re.sub(lambda m, am=addr_map: am[m.group(1)],  # type: ignore[misc]
                                    id_re.sub(lambda m, im=id_map: im[m.group(0)], text))  # type: ignore[misc]
            clone = json.loads(copy_text)
            iid = id_map[seed]
            for s in (*SECTIONS, "networks"):
                state[s].update(clone[s])
            state["deployments"][iid] = clone["deployment"]
            state["extras"][iid] = clone["extras"]
            new_ids.append(iid)
    return new_ids


def clone_instances(app: App, seed: str, ids: list[str]) -> None:
    """The cloned VNFs' instance rows (INSTANTIATED, with their resources) in the database."""
    with app.uow() as uow:
        template = uow.instances.get(seed)
    assert template is not None
    state = app.sim.state() if ids else {}
    for start in range(0, len(ids), 500):
        with app.uow() as uow:
            for iid in ids[start:start + 500]:
                inst = copy.deepcopy(template)
                inst.id = iid
                inst.instantiation_state = InstantiationState.INSTANTIATED
                inst.resources = resources_of(state, iid)
                inst.lock_op_id = None
                uow.instances.add(inst)
            uow.commit()


def store_size(app: App, data_dir: Path) -> int:
    """Bytes of the simulated cloud's store, its write-ahead log checkpointed first."""
    app.sim.store.checkpoint()
    return sum(p.stat().st_size for p in data_dir.glob("simcloud*") if p.is_file())


# ------------------------------------------------------------------------------------ one size
async def measure(size: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="vnfm-fleet-") as tmp:
        data = Path(tmp)
        async with bench_app(data) as (app, vnfd_id):
            seed, _, _ = await instantiate(app, vnfd_id)  # also the warm-up
            t0 = time.perf_counter()
            ids = clone_fleet(app.sim, seed, max(0, size - 1))
            clone_instances(app, seed, ids)
            fill = time.perf_counter() - t0
            walls, cpus = [], []
            for _ in range(runs):
                _, wall, cpu = await instantiate(app, vnfd_id)
                walls.append(wall)
                cpus.append(cpu)
            return {"size": size, "wall": statistics.median(walls), "cpu": statistics.median(cpus),
                    "min": min(walls), "max": max(walls), "store": store_size(app, data), "fill": fill}


async def main_async(sizes: list[int], runs: int) -> None:
    rows = []
    for size in sizes:
        row = await measure(size, runs)
        rows.append(row)
        print(f"{size:>6} VNFs deployed: instantiate server-side median {row['wall'] * 1000:8.1f} ms "
              f"(CPU {row['cpu'] * 1000:7.1f} ms, min {row['min'] * 1000:.1f}, max {row['max'] * 1000:.1f}); "
              f"simulated cloud store {row['store'] / 1e6:7.2f} MB; fleet built in {row['fill']:.1f} s",
              flush=True)
    base = next((r for r in rows if r["size"] == 0), None)
    thousand = next((r for r in rows if r["size"] == 1000), None)
    if base and thousand:
        for what, label in (("cpu", "CPU (median)"), ("wall", "wall (median)"), ("min", "wall (min)")):
            ratio = thousand[what] / base[what]
            print(f"{label}: cost at 1,000 / cost at 0 = {ratio:.2f} (target <= {TARGET}) -> "
                  f"{'MET' if ratio <= TARGET else 'MISSED'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="0,100,1000", help="fleet sizes, comma-separated")
    ap.add_argument("--big", action="store_true", help="add 5,000 VNFs to the sizes")
    ap.add_argument("--runs", type=int, default=3, help="instantiates measured per size (median)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.big and 5000 not in sizes:
        sizes.append(5000)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main_async(sizes, args.runs))


if __name__ == "__main__":
    main()
