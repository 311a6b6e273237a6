"""LCM overhead on the simulated cloud with zero latency (a benchmark, not a test: prints figures).

End to end through the HTTP API of a server running in a thread: POST .../instantiate of the
example package's `simple` flavour (1 master + 2 workers), then poll the occurrence until it is
COMPLETED. Target: under 200 ms. Runs against the embedded default (simulated cloud state in a
JSON file) and against an in-memory simulated cloud (the LCM overhead alone).

    .venv/bin/python bench/lcm_overhead.py [--runs 20] [--poll 0.002] [--sim file|memory|both]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.bootstrap import build
from vnfm.config import Settings
from vnfm.entrypoints.api.app import create_app
from vnfm.entrypoints.api.server import start_in_thread
from vnfm.examples import example_csar

TARGET_MS = 200.0

BODY = {
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


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


class Server:
    """The API server in a thread of this process: `file` is the embedded default (the simulated
    cloud persisted in a JSON file), `memory` keeps the simulated cloud in memory (isolates the
    LCM overhead from the simulator's persistence)."""

    def __init__(self, data_dir: Path, sim: str) -> None:
        settings = Settings(data_dir=data_dir, port=0, probe_callbacks=False, sim_boot_time=0, sim_step_time=0,
                            auth_token="")
        if sim == "file":
            handle = start_in_thread(settings)
            self.url, self._stop = handle.url, handle.stop
            self.core = handle.server.config.app.state.vnfm
            return
        cloud = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0))
        self.core = build(settings, sim=cloud)
        config = uvicorn.Config(create_app(vnfm_app=self.core), host="127.0.0.1", port=0, log_level="warning",
                                access_log=False, lifespan="on")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise SystemExit("the server did not start")
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

        def stop() -> None:
            server.should_exit = True
            thread.join(10)

        self._stop = stop

    def stop(self) -> None:
        self._stop()


def bench(sim: str, runs: int, warmup: int, poll: float) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-bench-") as tmp:
        server = Server(Path(tmp), sim)
        try:
            with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as c:
                pkg = c.post("/vnfpkgm/v1/vnf_packages", json={}).json()
                r = c.put(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}/package_content", content=example_csar(),
                          headers={"Content-Type": "application/zip"})
                r.raise_for_status()
                vnfd_id = c.get(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}").json()["vnfdId"]

                accept_ms: list[float] = []
                total_ms: list[float] = []
                timings: dict[str, list[float]] = {}
                for i in range(warmup + runs):
                    inst_id = c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id}).json()["id"]
                    t0 = time.perf_counter()
                    r = c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=BODY)
                    t_accept = time.perf_counter()
                    assert r.status_code == 202, r.text
                    loc = r.headers["Location"]
                    while True:
                        occ = c.get(loc).json()
                        if occ["operationState"] not in ("STARTING", "PROCESSING"):
                            break
                        time.sleep(poll)
                    t_end = time.perf_counter()
                    if occ["operationState"] != "COMPLETED":
                        raise SystemExit(f"instantiate ended {occ['operationState']}: {json.dumps(occ.get('error'))}")
                    if i < warmup:
                        continue
                    accept_ms.append((t_accept - t0) * 1000)
                    total_ms.append((t_end - t0) * 1000)
                    with server.core.uow() as uow:
                        plan = uow.op_occs.get(occ["id"]).plan
                    for stage, secs in (plan.get("timings") or {}).items():
                        timings.setdefault(stage, []).append(secs * 1000)
        finally:
            server.stop()

    med, p90 = statistics.median(total_ms), percentile(total_ms, 90)
    k = max(1, len(total_ms) // 4)
    print(f"[simulated cloud state: {sim}] instantiate 1 master + 2 workers, zero simulator latency, "
          f"{runs} runs (after {warmup} warm-up)")
    print(f"  end to end (POST -> COMPLETED seen): median {med:7.1f} ms   p90 {p90:7.1f} ms   "
          f"min {min(total_ms):6.1f}   max {max(total_ms):6.1f}")
    print(f"  trend: median of the first {k} runs {statistics.median(total_ms[:k]):7.1f} ms, "
          f"of the last {k} {statistics.median(total_ms[-k:]):7.1f} ms")
    print(f"  POST instantiate -> 202:             median {statistics.median(accept_ms):7.1f} ms   "
          f"p90 {percentile(accept_ms, 90):7.1f} ms")
    for stage, vals in timings.items():
        print(f"  stage {stage:<20} median {statistics.median(vals):7.1f} ms")
    print(f"  target: < {TARGET_MS:.0f} ms end to end -> {'MET' if p90 < TARGET_MS else 'MISSED'} (p90)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--poll", type=float, default=0.002, help="seconds between polls of the occurrence")
    ap.add_argument("--sim", choices=["file", "memory", "both"], default="both",
                    help="file: the embedded default (JSON-file state); memory: in-memory simulated cloud")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for sim in (["file", "memory"] if args.sim == "both" else [args.sim]):
        bench(sim, args.runs, args.warmup, args.poll)


if __name__ == "__main__":
    main()
