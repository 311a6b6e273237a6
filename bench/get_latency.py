"""GET latency with many VNF instances stored (a benchmark, not a test: prints figures).

Starts the API server in a thread (SQLite in a temporary directory), instantiates one VNF of the
example package through the API, stores N-1 copies of it (fully instantiated, 3 VNFCs each) directly
through the unit of work, then times GET /vnflcm/v1/vnf_instances/{id} for random ids with httpx
(one keep-alive connection). Target: p99 under 20 ms with 10,000 instances.

    .venv/bin/python bench/get_latency.py [--instances 10000] [--requests 1000]
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from vnfm.config import Settings
from vnfm.domain.model import new_id, utcnow
from vnfm.entrypoints.api.server import start_in_thread
from vnfm.examples import example_csar

TARGET_P99_MS = 20.0

BODY = {
    "flavourId": "simple",
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1",
                            "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "bench-pw"},
            "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                            "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "bench-pw"},
        }
    },
}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=1_000)
    ap.add_argument("--batch", type=int, default=1_000, help="instances inserted per transaction")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    rng = random.Random(42)

    with tempfile.TemporaryDirectory(prefix="vnfm-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp), port=0, probe_callbacks=False, sim_boot_time=0, sim_step_time=0,
                            auth_token="")
        server = start_in_thread(settings)
        try:
            core = server.server.config.app.state.vnfm
            with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as c:
                pkg = c.post("/vnfpkgm/v1/vnf_packages", json={}).json()
                c.put(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}/package_content", content=example_csar(),
                      headers={"Content-Type": "application/zip"}).raise_for_status()
                vnfd_id = c.get(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}").json()["vnfdId"]
                first = c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id}).json()["id"]
                loc = c.post(f"/vnflcm/v1/vnf_instances/{first}/instantiate", json=BODY).headers["Location"]
                deadline = time.monotonic() + 30
                while c.get(loc).json()["operationState"] != "COMPLETED":
                    if time.monotonic() > deadline:
                        raise SystemExit("the template instance did not instantiate")
                    time.sleep(0.01)
                template_size = len(c.get(f"/vnflcm/v1/vnf_instances/{first}").content)

                # Store the copies directly (this is not what is measured).
                t0 = time.perf_counter()
                with core.uow() as uow:
                    template = uow.instances.get(first)
                ids = [first]
                remaining = args.instances - 1
                while remaining > 0:
                    n = min(args.batch, remaining)
                    with core.uow() as uow:
                        for _ in range(n):
                            clone = dataclasses.replace(template, id=new_id(), created_at=utcnow(),
                                                        vnf_instance_name=None, lock_op_id=None)
                            clone.vnf_instance_name = f"vnf-{clone.id}"
                            uow.instances.add(clone)
                            ids.append(clone.id)
                        uow.commit()
                    remaining -= n
                insert_s = time.perf_counter() - t0

                # Warm up the connection and caches, then measure.
                for inst_id in rng.sample(ids, min(50, len(ids))):
                    assert c.get(f"/vnflcm/v1/vnf_instances/{inst_id}").status_code == 200
                lat_ms: list[float] = []
                for _ in range(args.requests):
                    inst_id = rng.choice(ids)
                    t = time.perf_counter()
                    r = c.get(f"/vnflcm/v1/vnf_instances/{inst_id}")
                    lat_ms.append((time.perf_counter() - t) * 1000)
                    if r.status_code != 200:
                        raise SystemExit(f"GET {inst_id}: HTTP {r.status_code} {r.text[:200]}")
        finally:
            server.stop()

    p50, p99 = percentile(lat_ms, 50), percentile(lat_ms, 99)
    print(f"GET /vnflcm/v1/vnf_instances/{{id}} with {len(ids):,} instances stored "
          f"({template_size:,}-byte bodies; inserted in {insert_s:.1f} s), {args.requests:,} requests")
    print(f"  p50 {p50:6.2f} ms   p90 {percentile(lat_ms, 90):6.2f} ms   p99 {p99:6.2f} ms   "
          f"mean {statistics.fmean(lat_ms):6.2f} ms   max {max(lat_ms):6.2f} ms")
    print(f"  target: p99 < {TARGET_P99_MS:.0f} ms -> {'MET' if p99 < TARGET_P99_MS else 'MISSED'}")


if __name__ == "__main__":
    main()
