"""Scale-out time of 1 vs 8 workers on the simulated cloud with a simulated per-node join time.

The Kubernetes driver joins the added workers in parallel, so 8 workers should take about as long
as one (target: at most 1.25 times; the reference implementation joins them one after another, so
it takes about 8 times as long).

The example package allows only 4 more workers, so the benchmark builds a variant of it in a temp
dir (flavour `simple`, worker aspect `worker_instance` up to 8 steps, up to 10 workers) with
vnfm.packaging.csar.build_csar.

The simulated per-node join time defaults to 2 s (a real `kubeadm join` takes 20-60 s). On top
of it every node costs some CPU time in the simulated cloud (its in-memory store deep-copies the
whole state on every read and transaction, ~40 ms per joined node here); that part is serial and
is printed separately (a run with join time 0), so the ratio at a given join time can be judged.

Usage: .venv/bin/python bench/scale_out_parallel.py [join_time_s] [workers]
Prints the timings and the ratio; exits 1 when the ratio is above the target.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.infra.simulator.twin import TwinConfig
from vnfm.bootstrap import build
from vnfm.config import Settings
from vnfm.domain.model import OpState
from vnfm.entrypoints.cli.demo import instantiate_request
from vnfm.examples import example_package_dir
from vnfm.packaging.csar import build_csar

TARGET = 1.25
FLAVOUR = "simple"
ASPECT = "worker_instance"


def _sub_once(pattern: str, repl: str, text: str, what: str) -> str:
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M | re.S)
    if n != 1:
        raise SystemExit(f"cannot build the package variant: {what} not found")
    return new


def variant_csar(workdir: Path, steps: int) -> bytes:
    """The example package with the `simple` flavour's worker aspect allowing `steps` steps."""
    src = workdir / "k8s_cluster"
    shutil.copytree(example_package_dir(), src)
    df = src / "Definitions" / f"sample_kubernetes_df_{FLAVOUR}.yaml"
    text = df.read_text()
    text = _sub_once(r"(worker_instance:\n(?:[^\n]*\n){0,4}?\s*max_scale_level:) \d+", rf"\1 {steps}", text,
                     "worker_instance max_scale_level")
    text = _sub_once(r"(workerNode:.*?max_number_of_instances:) \d+", rf"\1 {steps + 2}", text,
                     "workerNode max_number_of_instances")
    df.write_text(text)
    hot = src / "BaseHOT" / FLAVOUR / "base_hot_top.yaml"
    hot.write_text(_sub_once(r"(worker_instance:\n\s*type: OS::Heat::AutoScalingGroup\n\s*properties:\n"
                             r"\s*min_size: \d+\n\s*max_size:) \d+", rf"\1 {steps + 2}", hot.read_text(),
                             "worker_instance max_size"))
    return build_csar(src)


async def measure(join_time: float, n_max: int) -> dict[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        csar = variant_csar(Path(tmp), n_max)
        sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0.05, api_latency=0.001, delete_time=0.01))
        twin = TwinConfig(join_time=join_time, poll=0.005)
        data = Path(tmp) / "data"
        app = build(Settings(data_dir=data, probe_callbacks=False), sim=sim, twin=twin, notifier=None)
        await app.start()
        pkg = app.packages.upload(app.packages.create({}).id, csar)

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
            results: dict[int, float] = {}
            for n in (1, n_max):
                inst = app.instances.create({"vnfdId": pkg.vnfd_id})
                await run(app.instances.instantiate(inst.id, instantiate_request(FLAVOUR)).id)
                results[n] = await run(app.instances.scale(
                    inst.id, {"type": "SCALE_OUT", "aspectId": ASPECT, "numberOfSteps": n}).id)
                workers = [v for v in app.instances.get(inst.id).resources.vnfcs if v.vdu_id == "workerNode"]
                if len(workers) != 2 + n:
                    raise SystemExit(f"scale-out by {n} left {len(workers)} workers, expected {2 + n}")
            return results
        finally:
            await app.stop()


async def main(join_time: float, n_max: int) -> float:
    base = await measure(0.0, n_max)
    results = await measure(join_time, n_max)
    ratio = results[n_max] / results[1]
    print(f"flavour {FLAVOUR}, aspect {ASPECT} allowing {n_max} steps (package variant built in a temp dir)")
    print(f"without join time (simulator overhead): 1 worker {base[1]:.3f}s, {n_max} workers {base[n_max]:.3f}s")
    print(f"per-node join time {join_time:g}s:")
    for n, t in results.items():
        print(f"  scale-out of {n} worker(s): {t:.3f}s")
    print(f"ratio {n_max} vs 1: {ratio:.2f} (target <= {TARGET:g}; one after another would be ~{n_max})")
    return ratio


if __name__ == "__main__":
    join = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    sys.exit(0 if asyncio.run(main(join, n)) <= TARGET else 1)
