"""Scale-out time of 1 vs N workers on the simulated cloud with a simulated per-node join time.

The Kubernetes driver joins the added workers in parallel, so N workers should take about as long
as one. The example package allows at most 4 more workers (worker_instance max_scale_level 4).
Usage: .venv/bin/python bench/scale_out_parallel.py [join_time_s]   (prints timings, no assertions)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.mgmt.kubernetes import KubernetesClusterDriver, TwinConfig
from vnfm.adapters.mgmt.registry import MgmtRegistry
from vnfm.bootstrap import build
from vnfm.config import Settings
from vnfm.domain.model import OpState
from vnfm.entrypoints.cli.demo import instantiate_request
from vnfm.examples import example_csar


async def main(join_time: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0.05, api_latency=0.001, delete_time=0.01))
        driver = KubernetesClusterDriver(TwinConfig(join_time=join_time, poll=0.005))
        reg = MgmtRegistry()
        reg.register("kubernetes", lambda: driver)
        app = build(Settings(data_dir=Path(tmp), probe_callbacks=False), sim=sim, mgmt=reg, notifier=None)
        await app.start()
        pkg = app.packages.upload(app.packages.create({}).id, example_csar())

        async def run(occ_id: str) -> float:
            t0 = time.monotonic()
            while True:
                occ = app.instances.op_get(occ_id)
                if occ.operation_state in (OpState.COMPLETED, OpState.FAILED_TEMP, OpState.FAILED):
                    if occ.operation_state != OpState.COMPLETED:
                        raise SystemExit(f"operation failed: {occ.error}")
                    return time.monotonic() - t0
                await asyncio.sleep(0.002)

        try:
            results = {}
            for n in (1, 4):
                inst = app.instances.create({"vnfdId": pkg.vnfd_id})
                await run(app.instances.instantiate(inst.id, instantiate_request("simple")).id)
                results[n] = await run(app.instances.scale(
                    inst.id, {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": n}).id)
            print(f"per-node join time {join_time:g}s")
            for n, t in results.items():
                print(f"scale-out of {n} worker(s): {t:.3f}s")
            print(f"ratio {max(results)} vs 1: {results[max(results)] / results[1]:.2f}")
        finally:
            await app.stop()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.5))
