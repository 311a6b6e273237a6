"""What the simulated cloud costs per instantiate, counted (a benchmark: prints figures, asserts nothing).

Set up as `bench/profile_instantiate.py` (one process, SQLite, the simulated cloud with zero latency,
the kubeadm driver on the twin, no HTTP): one warm-up instantiate, then `--runs` instantiates of
1 master + 2 workers, one at a time. Prints per instantiate, for the simulated cloud's store only:
transactions (read / write), `StateStore.begin` calls (those joining an open transaction apart),
documents and extras parsed and dumped (count and bytes), rows written, views parsed or reused,
the thread CPU spent inside its transactions, and (`--callers`) which functions begin them.
Counts do not drift with the machine's load as CPU seconds do: compare them first.

    .venv/bin/python bench/sim_cost.py [--runs 20] [--callers 15] [--steps 2000]

`--steps N` then times N node steps of the twin on the last instance (CPU per step; the counts
above are not affected).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import logging
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sim_fleet  # noqa: E402

from vnfm.adapters import jsoncodec  # noqa: E402
from vnfm.adapters.infra.simulator import store as store_mod  # noqa: E402
from vnfm.adapters.infra.simulator import tx as tx_mod  # noqa: E402

COUNTS: collections.Counter[str] = collections.Counter()
CALLERS: collections.Counter[str] = collections.Counter()
CPU_BY_CALLER: collections.Counter[str] = collections.Counter()
CURRENT = ""  # who began the transaction under way
WRITES = 0  # statements that wrote, in the transaction under way
DETAIL = False
ON = False
_SKIP = ("/simulator/store.py", "/simulator/base.py", "/simulator/lookups.py", "contextlib.py", "/sim_cost.py",
         "/simulator/tx.py", "/simulator/twin/executor.py", "/service/lcm/fence.py")


def _caller(depth: int = 2) -> str:
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename.endswith(_SKIP):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "?"
    path = frame.f_code.co_filename
    return f"{path.rsplit('/vnfm/', 1)[-1]}:{frame.f_code.co_name}"


def _count(key: str, n: int = 1) -> None:
    if ON:
        COUNTS[key] += n


def _instrument() -> None:
    begin = store_mod.StateStore.begin.__wrapped__  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def counted_begin(self: store_mod.StateStore, *, write: bool = True) -> Iterator[Any]:
        joined = getattr(self._local, "tx", None) is not None
        caller = ("joined " if joined else ("write " if write else "read  ")) + _caller()
        if ON:
            _count("begin calls")
            _count("begin calls joining an open transaction" if joined else
                   f"transactions ({'write' if write else 'read'})")
            CALLERS[caller] += 1
        global CURRENT, WRITES
        if not joined:
            CURRENT, WRITES = caller, 0
        t0 = time.thread_time()
        try:
            yield from begin(self, write=write)
        finally:
            if not joined and ON:
                if write and WRITES == 0:
                    _count("write transactions that wrote nothing")
                    CALLERS["nothing written by " + caller] += 1
                spent = int((time.thread_time() - t0) * 1e6)
                _count("thread CPU in transactions (us)", spent)
                CPU_BY_CALLER[caller] += spent

    store_mod.StateStore.begin = counted_begin  # type: ignore[method-assign]

    def loads(text: str | bytes) -> Any:
        if ON:
            CALLERS["parse  " + _caller(1)] += 1
        t0 = time.thread_time()
        value = jsoncodec.loads(text)
        _count("thread CPU in JSON parses (us)", int((time.thread_time() - t0) * 1e6))
        _count("JSON parses (tx.py)")
        _count("JSON bytes parsed", len(text))
        return value

    def dumps(value: Any, default: Any = None) -> str:
        t0 = time.thread_time()
        text = jsoncodec.dumps(value, default)
        _count("thread CPU in JSON dumps (us)", int((time.thread_time() - t0) * 1e6))
        _count("JSON dumps (tx.py)")
        _count("JSON bytes dumped", len(text))
        return text

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **kw: Any) -> Any:
            if ON:
                CALLERS[name[:6] + " " + _caller(1)] += 1
            t0 = time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                spent = int((time.thread_time() - t0) * 1e6)
                _count(f"thread CPU in {name} (us)", spent)
                if DETAIL and ON:
                    CPU_BY_CALLER[f"{CURRENT} / {name}"] += spent
        return wrapper

    from vnfm.adapters.infra.simulator import deployments, lookups
    for module in (tx_mod, deployments, lookups):
        module.private = timed("private copies", tx_mod.private)  # type: ignore[attr-defined]
    tx_mod.Tx.flush = timed("Tx.flush", tx_mod.Tx.flush)  # type: ignore[method-assign]

    tx_mod.jsoncodec = types.SimpleNamespace(loads=loads, dumps=dumps)  # type: ignore[assignment]


class _Conn:
    """Counts the statements a transaction sends (by first word and table for writes)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> Any:
        self._note(sql, args)
        t0 = time.thread_time()
        try:
            return self._conn.execute(sql, *args)
        finally:
            spent = int((time.thread_time() - t0) * 1e6)
            _count(f"thread CPU in SQL {sql.split(None, 1)[0].upper()} (us)", spent)
            if DETAIL and ON:
                CPU_BY_CALLER[f"{CURRENT} / SQL {sql.split(None, 1)[0].upper()}"] += spent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def executemany(self, sql: str, rows: Any) -> Any:
        self._note(sql, ())
        return self._conn.executemany(sql, rows)

    @staticmethod
    def _note(sql: str, args: tuple[Any, ...]) -> None:
        words = sql.split()
        verb = words[0].upper()
        _count(f"sql {verb}")
        if verb in ("INSERT", "UPDATE", "DELETE"):
            global WRITES
            WRITES += 1
            # the word after INTO / FROM / UPDATE ("INSERT OR IGNORE INTO t", "DELETE FROM t", "UPDATE t")
            keyword = {"INSERT": "INTO", "DELETE": "FROM"}.get(verb, verb)
            upper = [w.upper() for w in words]
            table = words[upper.index(keyword) + 1] if keyword in upper else words[1]
            _count(f"  write {verb} {table}")
            size = sum(len(v) for v in (args[0] if args else ()) if isinstance(v, str))
            _count(f"  bytes written {table}", size)


async def steps(cloud: Any, instance_id: str, n: int) -> None:
    """CPU per twin node step on the last instance: a label change (written) and a label already
    set (nothing to write)."""
    from vnfm.adapters.infra.simulator.twin.executor import TwinExecutor
    from vnfm.nodesteps.kubernetes import LabelNode

    state = cloud.instance_state(instance_id)
    master = next(s for s in state["servers"].values() if s["vdu_id"] == "masterNode")
    port = state["ports"][master["ports"][0]]
    host = port["fixed_ips"][0]["ip_address"]
    node = next(iter(cloud.extras(instance_id)["k8s"]["nodes"]))
    ex = TwinExecutor(cloud, instance_id)
    cases = {
        "label step, written": lambda i: ex.run(host, LabelNode(node, (("bench", str(i % 2)),))),
        "label step, unchanged": lambda i: ex.run(host, LabelNode(node, (("bench", "1"),))),
    }
    for what, make in cases.items():
        best = []
        for _ in range(5):  # the least of 5 batches: the machine's other load inflates, never deflates
            c0 = time.thread_time()
            for i in range(n // 5):
                await make(i)
            best.append((time.thread_time() - c0) * 1e6 / (n // 5))
        print(f"  {what:<44} {min(best):10.1f} us CPU per step (least of 5 batches)")


async def run(runs: int, step_runs: int = 0, fleet: int = 0) -> float:
    global ON
    with tempfile.TemporaryDirectory(prefix="vnfm-simcost-") as tmp:
        data = Path(tmp)
        cloud = sim_fleet.open_cloud(data)
        cloud.store._conn = _Conn(cloud.store._conn)  # type: ignore[assignment]
        async with sim_fleet.bench_app(data, cloud) as (app, vnfd):
            seed, _, _ = await sim_fleet.instantiate(app, vnfd)  # warm-up
            if fleet:  # copies of the warm-up's part of the simulated cloud (its records only)
                sim_fleet.clone_fleet(cloud, seed, fleet)
            # pages the simulated cloud's commits append to its write-ahead log: checkpoint, then no
            # automatic checkpoint (which would empty the log) until they are counted
            cloud.store.checkpoint()
            cloud.store._conn.execute("PRAGMA wal_autocheckpoint = 0")
            ON = True
            c0 = time.process_time()
            each: list[float] = []
            for _ in range(runs):
                c1 = time.process_time()
                iid, _, _ = await sim_fleet.instantiate(app, vnfd)
                each.append(time.process_time() - c1)
            cpu = time.process_time() - c0
            batches = [sum(each[i:i + 5]) / 5 for i in range(0, runs - 4, 5)]
            print(f"process CPU per instantiate: median {statistics.median(each) * 1000:.1f} ms, least batch "
                  f"of 5 {min(batches, default=cpu / runs) * 1000:.1f} ms")
            ON = False
            frames = cloud.store._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
            COUNTS["pages written to the write-ahead log"] = frames
            cloud.store._conn.execute("PRAGMA wal_autocheckpoint = 1000")
            if step_runs:
                await steps(cloud, iid, step_runs)
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--callers", type=int, default=0, help="print the N callers that begin most")
    ap.add_argument("--steps", type=int, default=0, help="then time N twin node steps of each kind")
    ap.add_argument("--detail", action="store_true", help="split the CPU by caller into SQL, flush, copies")
    ap.add_argument("--fleet", type=int, default=0, help="clone the warm-up's cloud records N times first")
    ap.add_argument("--no-gc", action="store_true", help="garbage collection off (its pauses land anywhere)")
    ap.add_argument("--plain", action="store_true", help="count nothing (CPU figures without the counters' cost)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    global DETAIL
    DETAIL = args.detail
    if args.no_gc:
        gc.disable()
    if not args.plain:
        _instrument()
    cpu = asyncio.run(run(args.runs, args.steps, args.fleet))
    print(f"{args.runs} instantiates: process CPU {cpu * 1000 / args.runs:.1f} ms per instantiate")
    for what, n in sorted(COUNTS.items()):
        print(f"  {what:<44} {n / args.runs:10.1f} per instantiate")
    if args.callers:
        print("callers (per instantiate):")
        for what, n in CALLERS.most_common(args.callers):
            print(f"  {n / args.runs:6.1f}  {what}")
        print("thread CPU inside transactions by who began them (us per instantiate):")
        for what, n in CPU_BY_CALLER.most_common(args.callers):
            print(f"  {n / args.runs:8.1f}  {what}")


if __name__ == "__main__":
    main()
