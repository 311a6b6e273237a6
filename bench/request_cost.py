"""What one API request costs the server, in process (a benchmark: prints figures, asserts nothing).

The real application (`create_app`, its middlewares, the access and audit log configured as
`vnfm server` does, to /dev/null) on SQLite in a temporary directory, the LCM engine off
(`run_engine=False`: an occurrence stays STARTING, so only the request is measured), driven through
httpx's ASGITransport (no sockets). Per kind of request, the median over `--rounds` rounds of
`--batch` requests of the process's CPU per request (for the POSTs a round ends when the notifier
has delivered what they staged: its CPU is theirs), and the SQL statements per request:

* `create`: POST /vnflcm/v1/vnf_instances
* `instantiate`: POST .../instantiate (bench/sim_fleet.py's body: 1 master + 2 workers)
* `list`: GET /vnflcm/v1/vnf_lcm_op_occs?filter=<the active states> with `--occurrences` stored
  (all of them match): with `fields=id` (what bench/fleet_load.py's drain poll asked before), with
  no selector, and with every attribute but `id` excluded (what the poll asks now)
* `get`: GET /vnflcm/v1/api_versions (the middlewares and routing alone)

    .venv/bin/python bench/request_cost.py [--rounds 7] [--batch 20] [--occurrences 200] [--only KIND]

`--http` measures create, instantiate and GET api_versions over real HTTP instead: a `vnfm server`
process (engine off, zero-latency simulator, SQLite), `--concurrency` requests in flight from this
process, the server process's CPU (/proc, 10 ms ticks: use batches of 100 or more) per request;
then GET api_versions once more from raw sockets (the httpx client's own CPU, on the same two
cores, inflates the server's figure).

`--yappi FILE` writes a CPU-clock profile of every thread of the measured requests (yappi,
installed by hand: `.venv/bin/pip install yappi`; it inflates cheap calls), `--only KIND` measures
one kind, `--sql` prints the statements of one request of each kind.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import copy
import os
import pstats
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import event
from sqlalchemy.engine import Engine

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_fleet import BODY  # noqa: E402

from vnfm.config import Settings  # noqa: E402
from vnfm.entrypoints.api.app import create_app  # noqa: E402
from vnfm.entrypoints.api.query import VNF_LCM_OP_OCC_ATTRIBUTES  # noqa: E402
from vnfm.entrypoints.logsetup import configure_logging  # noqa: E402
from vnfm.examples import example_csar  # noqa: E402

ACTIVE = "(in,operationState,STARTING,PROCESSING,ROLLING_BACK)"
ONLY_IDS = "exclude_fields=" + ",".join(sorted(VNF_LCM_OP_OCC_ATTRIBUTES - {"id"}))  # bench/fleet_load.py's poll
SQL: collections.Counter[str] = collections.Counter()


SHOW: list[str] = []


def _count_sql(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
    SQL["sql"] += 1
    if SHOW:
        print("     ", " ".join(statement.split())[:160])


async def quiet(deadline_s: float = 60.0) -> None:
    """Until no statement ran for 0.3 s (the notifier's outbox drained), at most `deadline_s`."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        before = SQL["sql"]
        await asyncio.sleep(0.3)
        if SQL["sql"] == before:
            return
    print(f"  (still busy after {deadline_s:g} s)")


class Bench:
    def __init__(self, rounds: int, batch: int, only: str, show_sql: bool, yappi_out: str) -> None:
        self.rounds, self.batch, self.only, self.show_sql, self.yappi_out = rounds, batch, only, show_sql, yappi_out

    async def measure(self, kind: str, name: str, one: Callable[[int], Awaitable[None]], *,
                      rounds: int = 0, batch: int = 0) -> None:
        """CPU per request of `one(n)` (n counts up from 0 over every call, the shown one too)."""
        rounds, batch = rounds or self.rounds, batch or self.batch
        n = 0
        if self.only and kind != self.only:
            for n in range(rounds * batch + self.show_sql):  # keeps the other kinds' data the same
                if kind in ("create", "instantiate"):
                    await one(n)
            return
        if self.show_sql:
            print(f"  {name}: the statements of one request")
            SHOW.append("on")
            await one(n)
            SHOW.clear()
            n += 1
        SQL.clear()
        per: list[float] = []
        if self.yappi_out:
            import yappi
            yappi.set_clock_type("cpu")
        for _ in range(rounds):
            c0 = time.process_time()
            if self.yappi_out:
                yappi.start(builtins=False)
            for _ in range(batch):
                await one(n)
                n += 1
            if kind in ("create", "instantiate"):
                await quiet()  # the notifications they staged delivered, in this round's CPU
            if self.yappi_out:
                yappi.stop()
            per.append((time.process_time() - c0) / batch)
        print(f"  {name:<36} CPU {statistics.median(per) * 1000:7.2f} ms per request (median of {rounds} rounds, "
              f"min {min(per) * 1000:.2f}), SQL statements {SQL['sql'] / (rounds * batch):.1f} per request")


async def run(b: Bench, occurrences: int) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-reqcost-") as tmp, open(os.devnull, "w") as null:
        settings = Settings(data_dir=Path(tmp), probe_callbacks=False, sim_boot_time=0, sim_step_time=0,
                            auth_token="", health_interval=0, run_engine=False)
        configure_logging("INFO", "human", stream=null)
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://vnfm") as c:
                pkg = (await c.post("/vnfpkgm/v1/vnf_packages", json={})).json()["id"]
                (await c.put(f"/vnfpkgm/v1/vnf_packages/{pkg}/package_content", content=example_csar(),
                             headers={"Content-Type": "application/zip"})).raise_for_status()
                vnfd = (await c.get(f"/vnfpkgm/v1/vnf_packages/{pkg}")).json()["vnfdId"]
                ids: list[str] = []

                async def create(_: int) -> None:
                    r = await c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd})
                    assert r.status_code == 201, r.text
                    ids.append(r.json()["id"])

                async def instantiate(i: int) -> None:
                    r = await c.post(f"/vnflcm/v1/vnf_instances/{ids[i]}/instantiate", json=copy.deepcopy(BODY))
                    assert r.status_code == 202, r.text

                for i in range(2):  # warm-up: first-use imports and caches
                    await create(i)
                    await instantiate(i)
                ids.clear()
                event.listen(Engine, "before_cursor_execute", _count_sql)
                print(f"{b.rounds} rounds of {b.batch} requests each (SQLite, engine off, in process):")
                await b.measure("create", "POST vnf_instances (create)", create)
                await b.measure("instantiate", "POST .../instantiate", instantiate)
                done = len(ids) + 2
                for _ in range(max(0, occurrences - done)):  # up to `occurrences` STARTING occurrences
                    await create(0)
                    await instantiate(len(ids) - 1)

                await quiet()  # the notifier has delivered what the creates and instantiates staged

                def lister(query: str) -> Callable[[int], Awaitable[None]]:
                    async def one(_: int) -> None:
                        r = await c.get(f"/vnflcm/v1/vnf_lcm_op_occs?{query}")
                        assert r.status_code == 200 and len(r.json()) >= occurrences, r.status_code

                    return one

                async def versions(_: int) -> None:
                    assert (await c.get("/vnflcm/v1/api_versions")).status_code == 200

                few = max(1, b.batch // 4)
                await b.measure("list", f"GET op_occs filter, fields=id ({occurrences})",
                                lister(f"filter={ACTIVE}&fields=id"), batch=few)
                await b.measure("list", f"GET op_occs filter ({occurrences})", lister(f"filter={ACTIVE}"), batch=few)
                await b.measure("list", f"GET op_occs filter, only ids ({occurrences})",
                                lister(f"filter={ACTIVE}&{ONLY_IDS}"), batch=few)
                await b.measure("get", "GET api_versions", versions, batch=b.batch * 5)
        if b.yappi_out:
            import yappi
            yappi.get_func_stats().save(b.yappi_out, "pstat")
            print(f"profile: {b.yappi_out}")


async def over_http(rounds: int, batch: int, concurrency: int) -> None:
    """CPU per request of the server process over HTTP (create, instantiate, GET api_versions)."""
    import subprocess

    from fleet_load import SERVER, ZERO_LATENCY, free_port, proc_cpu, wait_up

    with tempfile.TemporaryDirectory(prefix="vnfm-reqcost-http-") as tmp:
        port = free_port()
        env = {**os.environ, **ZERO_LATENCY, "VNFM_AUTH_TOKEN": "", "VNFM_PROBE_CALLBACKS": "0",
               "VNFM_RUN_ENGINE": "0", "VNFM_DATA_DIR": tmp, "VNFM_PORT": str(port)}
        with open(Path(tmp) / "server.log", "wb") as log:
            server = subprocess.Popen([sys.executable, "-c", SERVER, "server"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=log)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_up(url, server)
            limits = httpx.Limits(max_connections=concurrency, keepalive_expiry=1.0)
            async with httpx.AsyncClient(base_url=url, timeout=120, trust_env=False, limits=limits) as c:
                await _http_kinds(c, server.pid, proc_cpu, rounds, batch, concurrency)
        finally:
            server.terminate()
            server.wait(timeout=30)


async def _http_kinds(c: httpx.AsyncClient, pid: int, proc_cpu: Callable[[int], float], rounds: int, batch: int,
                      concurrency: int) -> None:
    pkg = (await c.post("/vnfpkgm/v1/vnf_packages", json={})).json()["id"]
    (await c.put(f"/vnfpkgm/v1/vnf_packages/{pkg}/package_content", content=example_csar(),
                 headers={"Content-Type": "application/zip"})).raise_for_status()
    vnfd = (await c.get(f"/vnfpkgm/v1/vnf_packages/{pkg}")).json()["vnfdId"]
    ids: list[str] = []
    sem = asyncio.Semaphore(concurrency)

    async def create() -> None:
        async with sem:
            r = await c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])

    async def instantiate() -> None:
        async with sem:
            r = await c.post(f"/vnflcm/v1/vnf_instances/{ids.pop()}/instantiate", json=copy.deepcopy(BODY))
        assert r.status_code == 202, r.text

    async def versions() -> None:
        async with sem:
            assert (await c.get("/vnflcm/v1/api_versions")).status_code == 200

    async def settled() -> float:
        """The server's CPU once it stopped using any (the notifier's outbox drained)."""
        before = proc_cpu(pid)
        for _ in range(100):
            await asyncio.sleep(0.3)
            now = proc_cpu(pid)
            if now == before:
                break
            before = now
        return before

    for _ in range(2):  # warm-up: first-use imports and caches
        await create()
        await instantiate()
    print(f"{rounds} rounds of {batch} requests, {concurrency} in flight (over HTTP, server process CPU):")
    for name, one in (("POST vnf_instances (create)", create), ("POST .../instantiate", instantiate),
                      ("GET api_versions", versions)):
        per = []
        for _ in range(rounds):
            c0 = await settled()
            await asyncio.gather(*(one() for _ in range(batch)))
            per.append((await settled() - c0) / batch)
        print(f"  {name:<36} CPU {statistics.median(per) * 1000:7.2f} ms per request (median of {rounds} rounds, "
              f"min {min(per) * 1000:.2f})")
        if one is create:
            await asyncio.gather(*(create() for _ in range(rounds * batch - len(ids))))
    await _raw_gets(c.base_url.port or 80, settled, rounds, batch, concurrency)


async def _raw_gets(port: int, settled: Callable[[], Awaitable[float]], rounds: int, batch: int,
                    concurrency: int) -> None:
    """GET api_versions again from raw keep-alive sockets (no HTTP library): httpx costs more CPU
    per request than the server, and sharing the two cores with it inflates the server's own CPU
    per request (cold caches), by ~40 % in the seventh session."""
    request = f"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()

    async def connection(count: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(count):
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: *(\d+)", head)
            assert head.startswith(b"HTTP/1.1 200") and length, head[:80]
            await reader.readexactly(int(length[1]))
        writer.close()

    per = []
    for _ in range(rounds):
        c0 = await settled()
        await asyncio.gather(*(connection(batch // concurrency) for _ in range(concurrency)))
        per.append((await settled() - c0) / (batch // concurrency * concurrency))
    print(f"  {'GET api_versions (raw sockets)':<36} CPU {statistics.median(per) * 1000:7.2f} ms per request "
          f"(median of {rounds} rounds, min {min(per) * 1000:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--occurrences", type=int, default=200)
    ap.add_argument("--only", default="", choices=["", "create", "instantiate", "list", "get"])
    ap.add_argument("--sql", action="store_true", help="print the statements of one request of each kind")
    ap.add_argument("--yappi", default="", help="write a CPU-clock profile of every thread here (pstats)")
    ap.add_argument("--top", type=int, default=0, help="print the profile's N largest cumulative entries")
    ap.add_argument("--http", action="store_true", help="over HTTP, a `vnfm server` process (create, "
                    "instantiate, api_versions)")
    ap.add_argument("--concurrency", type=int, default=20, help="--http: requests in flight")
    args = ap.parse_args()
    if args.http:
        asyncio.run(over_http(args.rounds, args.batch, args.concurrency))
        return
    asyncio.run(run(Bench(args.rounds, args.batch, args.only, args.sql, args.yappi), args.occurrences))
    if args.yappi and args.top:
        pstats.Stats(args.yappi).sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
