"""List latency with many VNF instances stored, on SQLite and PostgreSQL (a benchmark: prints figures).

For each database and size: starts the API server in a thread (real HTTP, uvicorn), instantiates
one VNF of the example package, stores copies of it (fully instantiated, 3 VNFCs each; their vnfdId
taken from 100 distinct values so that a filter by vnfdId selects 1 %) directly through the unit of
work, then times with httpx (one keep-alive connection):

* the first page of GET /vnflcm/v1/vnf_instances (page size 1,000, the default),
* a page in the middle (following a marker),
* GET ...?filter=(eq,vnfdId,<one of the 100>) (1 % of the instances, one page),
* GET of one instance while nothing else runs.

Issue 17's targets (PostgreSQL): first page at 50,000 instances p99 < 500 ms; filtered by vnfdId
p99 < 100 ms. PostgreSQL is a throwaway cluster started as the tests do (tests/unit/db/pgcluster:
initdb + pg_ctl; needs the server binaries), or VNFM_BENCH_PG_URL.

    .venv/bin/python bench/list_latency.py [--sizes 10000,50000] [--requests 20] [--db sqlite,postgresql]
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import logging
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.unit.db.pgcluster

from bench.get_latency import BODY, percentile  # noqa: E402
from vnfm.config import Settings  # noqa: E402
from vnfm.domain.model import new_id, utcnow  # noqa: E402
from vnfm.entrypoints.api.server import start_in_thread  # noqa: E402
from vnfm.examples import example_csar  # noqa: E402

TARGET_FIRST_MS, TARGET_FILTER_MS = 500.0, 100.0
VNFDS = [f"bench-vnfd-{n:03d}" for n in range(100)]


@contextmanager
def postgres_url() -> Iterator[str | None]:
    if os.environ.get("VNFM_BENCH_PG_URL"):
        yield os.environ["VNFM_BENCH_PG_URL"]
        return
    from tests.unit.db.pgcluster import start_cluster

    cluster, reason = start_cluster()
    if cluster is None:
        print(f"PostgreSQL: not reachable ({reason}); skipped")
        yield None
        return
    try:
        yield cluster.create_database(f"vnfm_bench_{new_id()[:8]}")
    finally:
        cluster.stop()


def seed(c: httpx.Client, core: Any, size: int, batch: int = 1000) -> list[str]:
    pkg = c.post("/vnfpkgm/v1/vnf_packages", json={}).json()
    c.put(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}/package_content", content=example_csar(),
          headers={"Content-Type": "application/zip"}).raise_for_status()
    vnfd_id = c.get(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}").json()["vnfdId"]
    first = c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id}).json()["id"]
    loc = c.post(f"/vnflcm/v1/vnf_instances/{first}/instantiate", json=BODY).headers["Location"]
    deadline = time.monotonic() + 60
    while c.get(loc).json()["operationState"] != "COMPLETED":
        if time.monotonic() > deadline:
            raise SystemExit("the template instance did not instantiate")
        time.sleep(0.02)
    with core.uow() as uow:
        template = uow.instances.get(first)
    ids = [first]
    while len(ids) < size:
        with core.uow() as uow:
            for _ in range(min(batch, size - len(ids))):
                clone = dataclasses.replace(template, id=new_id(), created_at=utcnow(), lock_op_id=None,
                                            vnfd_id=VNFDS[len(ids) % len(VNFDS)])
                clone.vnf_instance_name = f"vnf-{clone.id}"
                uow.instances.add(clone)
                ids.append(clone.id)
            uow.commit()
    return ids


def timed(c: httpx.Client, url: str, n: int) -> tuple[list[float], httpx.Response]:
    r = c.get(url)  # warm-up
    lat: list[float] = []
    for _ in range(n):
        t = time.perf_counter()
        r = c.get(url)
        lat.append((time.perf_counter() - t) * 1000)
        if r.status_code != 200:
            raise SystemExit(f"GET {url}: HTTP {r.status_code} {r.text[:200]}")
    return lat, r


def line(what: str, lat: list[float], extra: str = "") -> str:
    return (f"  {what:<34} p50 {percentile(lat, 50):8.1f} ms  p99 {percentile(lat, 99):8.1f} ms"
            f"  max {max(lat):8.1f} ms  {extra}")


def run(db: str, url: str | None, size: int, requests: int) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp), port=0, probe_callbacks=False, sim_boot_time=0, sim_step_time=0,
                            auth_token="", **({"database_url": url} if url else {}))
        server = start_in_thread(settings)
        try:
            core = server.server.config.app.state.vnfm
            with httpx.Client(base_url=server.url, timeout=120, trust_env=False) as c:
                t0 = time.perf_counter()
                ids = seed(c, core, size)
                insert_s = time.perf_counter() - t0
                print(f"{db}, {len(ids):,} instances (stored in {insert_s:.0f} s):")
                lat, r = timed(c, "/vnflcm/v1/vnf_instances", requests)
                print(line("first page", lat, f"{len(r.json())} items, {len(r.content):,} bytes"))
                first_p99 = percentile(lat, 99)
                assert "Link" in r.headers
                marker = base64.urlsafe_b64encode(ids[len(ids) // 2].encode()).decode().rstrip("=")
                lat, r = timed(c, f"/vnflcm/v1/vnf_instances?nextpage_opaque_marker={marker}", requests)
                print(line("a page after a marker", lat, f"{len(r.json())} items"))
                lat, r = timed(c, f"/vnflcm/v1/vnf_instances?filter=(eq,vnfdId,{VNFDS[7]})", requests)
                print(line("filter (eq,vnfdId,...) (1 %)", lat, f"{len(r.json())} items"))
                filt_p99 = percentile(lat, 99)
                lat, _ = timed(c, f"/vnflcm/v1/vnf_instances/{random.choice(ids)}", requests * 5)
                print(line("GET one instance", lat))
                if db == "postgresql":
                    print(f"  targets: first page p99 < {TARGET_FIRST_MS:.0f} ms -> "
                          f"{'MET' if first_p99 < TARGET_FIRST_MS else 'MISSED'}; filtered p99 < "
                          f"{TARGET_FILTER_MS:.0f} ms -> {'MET' if filt_p99 < TARGET_FILTER_MS else 'MISSED'}")
        finally:
            server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,50000")
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--db", default="sqlite,postgresql")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    sizes = [int(s) for s in args.sizes.split(",")]
    dbs = args.db.split(",")
    for size in sizes:
        if "sqlite" in dbs:
            run("sqlite", None, size, args.requests)
    if "postgresql" in dbs:
        for size in sizes:
            with postgres_url() as url:
                if url:
                    run("postgresql", url, size, args.requests)


if __name__ == "__main__":
    main()
