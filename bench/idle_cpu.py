"""The fixed CPU cost of an idle server process (a benchmark: prints figures).

Every process pays for its pollers, heartbeats, watchers and notification outbox whether or not it
runs operations; with K processes the fleet pays it K times (issue 24 item 4: CPU per cluster with 2
and 4 processes within 10 % of one). This starts K `vnfm server` processes as bench/fleet_load.py
does (zero-latency simulated cloud, one data dir, SQLite or a throwaway PostgreSQL), lets them
settle, and prints the CPU each used over `--seconds` of doing nothing, per minute.

    .venv/bin/python bench/idle_cpu.py --processes 1,2,4 --db postgresql [--seconds 60] [--py-spy FILE]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fleet_load import proc_cpu, servers  # noqa: E402
from bench.list_latency import postgres_url  # noqa: E402


def run(k: int, db: str, seconds: float, settle: float, py_spy: str) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-idle-") as tmp, \
            (postgres_url() if db == "postgresql" else nullcontext(None)) as url:
        if db == "postgresql" and url is None:
            return
        with servers(k, Path(tmp), url) as procs:
            pids = [p.pid for p, _ in procs]
            time.sleep(settle)  # the start's own work (migrations, first polls) is not counted
            spy = None
            if py_spy:
                exe = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
                spy = subprocess.Popen([exe, "record", "--pid", str(pids[0]), "--rate", "200", "--gil",  # noqa: S603
                                        "--format", "raw", "--output", py_spy, "--duration", str(int(seconds))],
                                       stdout=subprocess.DEVNULL)
            cpu0 = [proc_cpu(pid) for pid in pids]
            t0 = time.monotonic()
            time.sleep(seconds)
            elapsed = time.monotonic() - t0
            used = [proc_cpu(pid) - c for pid, c in zip(pids, cpu0, strict=True)]
            if spy is not None:
                spy.wait(timeout=seconds + 60)
    per_min = [u / elapsed * 60 for u in used]
    print(f"{db}, {k} process(es) idle for {elapsed:.0f} s: CPU per process per minute "
          f"{', '.join(f'{x:.2f}' for x in per_min)} s (total {sum(per_min):.2f} s per minute)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", default="1,2,4")
    ap.add_argument("--db", default="postgresql", choices=["sqlite", "postgresql"])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--settle", type=float, default=10.0, help="seconds after start that are not counted")
    ap.add_argument("--py-spy", default="", help="record the first server's idle window into this file (raw)")
    args = ap.parse_args()
    for k in (int(x) for x in args.processes.split(",")):
        run(k, args.db, args.seconds, args.settle, args.py_spy)


if __name__ == "__main__":
    main()
