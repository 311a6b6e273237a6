"""Server CPU per cluster of two source trees, measured alternately (a benchmark: prints figures).

On a shared, loaded machine CPU seconds drift by tens of percent within minutes, so one build's
figure from an hour ago says little. This runs `bench/fleet_load.py` from tree A, then tree B,
then A ... (`--runs` each, under `nice`), and prints every run and the medians.

    git archive main | tar -x -C /tmp/old
    .venv/bin/python bench/cpu_ab.py --a /tmp/old --b . --runs 3 --clusters 200

Each tree runs with its own `src` first on PYTHONPATH (the same virtual environment).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

FIGURE = re.compile(r"\((\d+) ms per cluster\)")
WALL = re.compile(r"wall ([\d.]+) s")
FAILED = re.compile(r"failures (\d+)")


def one(tree: Path, args: argparse.Namespace) -> tuple[int, float, int]:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}:{tree}"}
    argv = ["nice", "-n", str(args.nice), sys.executable, str(tree / "bench" / "fleet_load.py"),
            "--clusters", str(args.clusters), "--concurrency", str(args.concurrency),
            "--processes", str(args.processes), "--db", args.db, *(["--tacker-body"] if args.tacker_body else [])]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=3600)
    text = out.stdout + out.stderr
    m, w, f = FIGURE.search(text), WALL.search(text), FAILED.search(text)
    if not (m and w and f):
        raise SystemExit(f"no figure from {tree}:\n{text[-2000:]}")
    return int(m.group(1)), float(w.group(1)), int(f.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", type=Path, required=True, help="the first source tree (e.g. main)")
    ap.add_argument("--b", type=Path, required=True, help="the second source tree (e.g. this branch)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clusters", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--db", default="sqlite", choices=["sqlite", "postgresql"])
    ap.add_argument("--tacker-body", action="store_true")
    ap.add_argument("--nice", type=int, default=10)
    args = ap.parse_args()
    figures: dict[str, list[int]] = {"a": [], "b": []}
    for i in range(args.runs):
        for name in ("a", "b"):
            tree = getattr(args, name).resolve()
            ms, wall, failed = one(tree, args)
            figures[name].append(ms)
            load = os.getloadavg()[0]
            print(f"run {i + 1} {name} ({tree}): {ms} ms per cluster, wall {wall:.1f} s, failures {failed}, "
                  f"load {load:.1f}", flush=True)
    for name in ("a", "b"):
        print(f"{name}: median {statistics.median(figures[name]):.0f} ms per cluster {figures[name]}")


if __name__ == "__main__":
    main()
