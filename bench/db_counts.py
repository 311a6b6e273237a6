"""The database statements of one instantiate, by statement and table and by who sent them (a
benchmark: prints counts, asserts nothing).

In one process, as `bench/profile_instantiate.py` sets it up (SQLite, the simulated cloud with zero
latency, no subscription unless `--subscribe`): one warm-up instantiate, then `--runs` sequential
instantiates (with the create before each and the bench's two polls of the occurrence). Prints per
instantiate: statements by their first word and table, transactions begun by the vnfm function
that began them (the three innermost frames outside the database adapter), and with `-v` every
statement by its caller. Counts do not drift with the machine's load.

    .venv/bin/python bench/db_counts.py [--runs 10] [--subscribe] [-v]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import logging
import re
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sim_fleet  # noqa: E402

TABLE = re.compile(r'(?:FROM|INTO|UPDATE)\s+"?(\w+)', re.IGNORECASE)
BY_TABLE: collections.Counter[str] = collections.Counter()
BY_CALLER: collections.Counter[str] = collections.Counter()
BEGUN: collections.Counter[str] = collections.Counter()


def _caller() -> str:
    frames = [f for f in traceback.extract_stack()[:-2]
              if "/vnfm/" in f.filename and "/adapters/db/" not in f.filename]
    return " < ".join(f"{Path(f.filename).stem}.{f.name}" for f in reversed(frames[-3:])) or "?"


def _statement(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
    found = TABLE.search(statement)
    what = f"{statement.lstrip().split(None, 1)[0].upper()} {found.group(1) if found else '?'}"
    BY_TABLE[what] += 1
    BY_CALLER[f"{what} @ {_caller()}"] += 1


def _begin(_conn: Any) -> None:
    BEGUN[_caller()] += 1


async def run(runs: int, subscribe: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-dbcounts-") as tmp:
        async with sim_fleet.bench_app(Path(tmp)) as (app, vnfd):
            if subscribe:  # nobody listens there: deliveries fail after their retries, off the counts' path
                await app.subscriptions.create({"callbackUri": "http://127.0.0.1:9/none"})
            await sim_fleet.instantiate(app, vnfd)  # warm-up
            event.listen(Engine, "before_cursor_execute", _statement)
            event.listen(Engine, "begin", _begin)
            try:
                for _ in range(runs):
                    await sim_fleet.instantiate(app, vnfd)
            finally:
                event.remove(Engine, "before_cursor_execute", _statement)
                event.remove(Engine, "begin", _begin)


def _show(title: str, counts: collections.Counter[str], runs: int) -> None:
    print(f"{title}: {sum(counts.values()) / runs:.1f} per instantiate")
    for what, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n / runs:7.2f}  {what}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--subscribe", action="store_true", help="one LCM subscription (notifications stored)")
    ap.add_argument("-v", action="store_true", help="every statement by its caller too")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    asyncio.run(run(args.runs, args.subscribe))
    _show("statements by table", BY_TABLE, args.runs)
    _show("transactions begun, by caller", BEGUN, args.runs)
    if args.v:
        _show("statements by caller", BY_CALLER, args.runs)


if __name__ == "__main__":
    main()
