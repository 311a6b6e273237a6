"""CPU of the health watcher per watched cluster (a benchmark: prints figures).

In one process, through `vnfm.bootstrap.build` (SQLite, zero-latency simulated cloud): instantiate
one seed cluster (1 master + 2 workers, the real management driver on the twin, which registers
the cluster's Kubernetes VIM), clone it to N clusters (bench/sim_fleet.py's cloning), give every
clone a Kubernetes VIM of its own (a copy of the seed's: the same simulated API server), then run
the watcher's rounds by hand (no sleep between them) and report the process CPU one round costs
per cluster: lease step, instance read, the VIM's view of 3 servers, one `list_node` through the
cluster's API (TLS), the alarm and lease-state bookkeeping. With the default interval (10 s) the
CPU share of one core the watching takes is (CPU per round) / 10 s.

    .venv/bin/python bench/watch_fleet.py [--clusters 1000] [--rounds 3] [--no-kube]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim_fleet import clone_fleet, clone_instances, instantiate, open_cloud  # noqa: E402

from vnfm.bootstrap import build  # noqa: E402
from vnfm.config import Settings  # noqa: E402
from vnfm.domain.model import new_id  # noqa: E402
from vnfm.examples import example_csar  # noqa: E402
from vnfm.service.vims import OWNER_KEY  # noqa: E402


async def measure(clusters: int, rounds: int, kube: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="vnfm-watch-") as tmp:
        data = Path(tmp)
        settings = Settings(data_dir=data, probe_callbacks=False, sim_boot_time=0, sim_step_time=0, auth_token="",
                            health_interval=0)  # rounds run by hand below
        app = build(settings, sim=open_cloud(data), notifier=None)
        await app.start()
        try:
            pkg = app.packages.upload(app.packages.create({}).id, example_csar())
            seed, _, _ = await instantiate(app, str(pkg.vnfd_id))
            ids = clone_fleet(app.sim, seed, clusters - 1)
            clone_instances(app, seed, ids)
            seed_vim = next(v for v in app.vims.list() if v.extra.get(OWNER_KEY) == seed)
            if kube:
                for iid in ids:
                    vim = copy.deepcopy(seed_vim)
                    vim.id, vim.name, vim.extra = new_id(), f"k8s-{iid}", {**seed_vim.extra, OWNER_KEY: iid}
                    vim.is_default = False
                    app.vims.register(vim)
            settings.health_interval = 10.0
            from vnfm.bootstrap import _health_watcher

            watcher = _health_watcher(settings, app.uow, app.alarms, app.instances, app.vims, app.infra_drivers,
                                      app.packages.vnfd, app.metrics)
            assert watcher is not None
            if not kube:  # the VIM's view only: no Kubernetes VIM known
                everything = app.vims.list
                watcher.all_vims = lambda: [v for v in everything() if v.vim_type != "kubernetes"]
            await watcher.run_round()  # warm-up (package cache, first leases)
            cpus, walls = [], []
            for _ in range(rounds):
                c0, w0 = time.process_time(), time.perf_counter()
                await watcher.run_round()
                cpus.append(time.process_time() - c0)
                walls.append(time.perf_counter() - w0)
            from vnfm.adapters.db.stats import fleet_counts

            open_alarms = sum(fleet_counts(app.uow().session_factory).open_alarms.values())
            return {"clusters": clusters, "held": len(watcher.held), "cpu": statistics.median(cpus),
                    "wall": statistics.median(walls), "alarms": open_alarms}
        finally:
            await app.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-kube", action="store_true", help="the VIM's view only (no list_node per cluster)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    r = asyncio.run(measure(args.clusters, args.rounds, not args.no_kube))
    per = r["cpu"] / max(1, r["clusters"]) * 1000
    print(f"clusters watched: {r['held']:.0f} of {r['clusters']:.0f}; open alarms: {r['alarms']:.0f}")
    print(f"one round: {r['cpu']:.2f} s CPU, {r['wall']:.2f} s wall (median of {args.rounds})")
    print(f"CPU per watched cluster per round: {per:.2f} ms; at a 10 s interval: "
          f"{r['cpu'] / 10 * 100:.1f} % of one core")


if __name__ == "__main__":
    main()
