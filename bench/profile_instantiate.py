"""What one instantiate costs, counted (a benchmark: prints figures, asserts nothing).

In one process, as `bench/sim_fleet.py` sets it up (SQLite, the simulated cloud with zero latency,
the kubeadm driver on the twin, no HTTP): one warm-up instantiate, then `--runs` instantiates of
1 master + 2 workers, `--concurrency` at a time. Prints per instantiate: CPU milliseconds of the
process, SQL statements sent (by their first word), database transactions, simulated-cloud
transactions, and the engine's own work: job writes (`JobStore._commit`), occurrence/instance
snapshots, fencing reads (`Liveness.owns` behind `Fence`) and log records. Counts do not drift
with the machine's load as CPU seconds do: compare them first.

    .venv/bin/python bench/profile_instantiate.py [--runs 20] [--concurrency 1] [--yappi FILE]

`--yappi FILE` also records a CPU-clock profile of every thread (yappi, installed by hand:
`.venv/bin/pip install yappi`; a deterministic profiler inflates cheap calls) as a pstats file;
`--top N` prints its N largest cumulative entries of vnfm's own code.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import logging
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference  # noqa: E402
import sim_fleet  # noqa: E402

from vnfm.adapters.infra.simulator.store import StateStore  # noqa: E402
from vnfm.service.lcm import fence, job  # noqa: E402

COUNTS: collections.Counter[str] = collections.Counter()
BY_TASK = False  # --tasks: count tasks by their coroutine too


def _count_sql(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
    COUNTS["sql " + statement.lstrip().split(None, 1)[0].upper()] += 1


def _count_sim() -> None:
    acquire = StateStore._acquire

    def counted(self: StateStore, *a: Any, **kw: Any) -> Any:
        COUNTS["simulated-cloud transactions"] += 1
        return acquire(self, *a, **kw)

    StateStore._acquire = counted  # type: ignore[method-assign]


def _count_engine() -> None:
    """Count the engine's job writes, snapshots and fencing reads (wrapping them in place)."""
    commit, snap, owned = job.JobStore._commit, job.snapshot, fence.Fence._owned

    def counted_commit(self: job.JobStore, *a: Any, **kw: Any) -> Any:
        COUNTS["engine job writes (_commit)"] += 1
        return commit(self, *a, **kw)

    def counted_snapshot(*a: Any) -> Any:
        COUNTS["engine snapshots"] += 1
        return snap(*a)

    def counted_owned(self: fence.Fence) -> bool:
        COUNTS["engine fencing reads"] += 1
        return owned(self)

    job.JobStore._commit = counted_commit  # type: ignore[method-assign]
    job.snapshot = counted_snapshot  # type: ignore[assignment]
    fence.Fence._owned = counted_owned  # type: ignore[method-assign]


def _count_loop() -> None:
    """Count asyncio tasks created and worker-thread hops (`asyncio.to_thread` and
    `loop.run_in_executor`: each is a GIL hand-off between the loop and a worker)."""
    loop = asyncio.get_running_loop()

    def factory(lp: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
        COUNTS["asyncio tasks created"] += 1
        if BY_TASK:
            COUNTS["  task " + getattr(coro, "__qualname__", type(coro).__name__)] += 1
        return asyncio.Task(coro, loop=lp, **kw)

    loop.set_task_factory(factory)  # type: ignore[arg-type]
    executor = loop.run_in_executor

    def counted_executor(ex: Any, fn: Any, *a: Any) -> Any:
        COUNTS["worker-thread hops"] += 1
        return executor(ex, fn, *a)

    loop.run_in_executor = counted_executor  # type: ignore[method-assign]


class _CountRecords(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        COUNTS["log records"] += 1


async def run(runs: int, concurrency: int, yappi_out: str) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-prof-") as tmp:
        async with sim_fleet.bench_app(Path(tmp)) as (app, vnfd):
            await sim_fleet.instantiate(app, vnfd)  # warm-up: imports, first-use caches
            event.listen(Engine, "before_cursor_execute", _count_sql)
            event.listen(Engine, "commit", lambda conn: COUNTS.update(["database commits"]))
            # transactions begun (SQLite's BEGIN IMMEDIATE is sent by the driver, unseen above)
            event.listen(Engine, "begin", lambda conn: COUNTS.update(["database transactions (begin)"]))
            _count_sim()
            _count_engine()
            _count_loop()
            counter = _CountRecords(logging.DEBUG)
            logging.getLogger().addHandler(counter)
            if yappi_out:
                import yappi
                yappi.set_clock_type("cpu")
                yappi.start(builtins=False)
            sem = asyncio.Semaphore(concurrency)

            async def one() -> None:
                async with sem:
                    await sim_fleet.instantiate(app, vnfd)

            c0, w0 = time.process_time(), time.perf_counter()
            await asyncio.gather(*(one() for _ in range(runs)))
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            logging.getLogger().removeHandler(counter)
            if yappi_out:
                yappi.stop()
                yappi.get_func_stats().save(yappi_out, "pstat")
    print(f"{runs} instantiates, {concurrency} at a time: CPU {cpu * 1000 / runs:.1f} ms per instantiate, "
          f"wall {wall:.1f} s{' (under yappi: inflated)' if yappi_out else ''}")
    for what, n in sorted(COUNTS.items()):
        print(f"  {what:<32} {n / runs:8.1f} per instantiate")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--yappi", default="", help="write a CPU-clock profile of every thread here (pstats)")
    ap.add_argument("--info", action="store_true",
                    help="make INFO records as a server does (printed: WARNING and above only)")
    ap.add_argument("--tasks", action="store_true", help="count asyncio tasks by their coroutine")
    ap.add_argument("--top", type=int, default=0, help="print the profile's N largest cumulative vnfm entries")
    args = ap.parse_args()
    global BY_TASK
    BY_TASK = args.tasks
    logging.basicConfig(level=logging.WARNING)
    if args.info:  # records are made (and counted) as at a server's default level; the console stays quiet
        logging.getLogger().handlers[0].setLevel(logging.WARNING)
        logging.getLogger().setLevel(logging.INFO)
    asyncio.run(run(args.runs, args.concurrency, args.yappi))
    print(reference.line())
    if args.yappi and args.top:
        pstats.Stats(args.yappi).sort_stats("cumulative").print_stats("vnfm", args.top)


if __name__ == "__main__":
    main()
