"""The speed of this machine right now, as one fixed pure-Python workload (a benchmark: prints it).

CPU seconds per cluster drift with the machine (another session on the same 2-core VM measured the
same code at 28-31 and at 46-51 ms per instantiate; a 10-million-addition loop took 0.9-1.2 s
within a minute). Benches print this figure beside theirs, measured in the same process just
before, so two figures taken at different times compare by their ratio to it:
figure / reference. The workload builds, serialises and parses small documents (dicts, lists,
strings, JSON), as a request and a stage save do; one round takes ~150-200 ms on
the 2-core VM, the fastest of five is the figure.

    .venv/bin/python bench/reference.py
"""

from __future__ import annotations

import json
import time

ROUNDS = 5


def _workload() -> int:
    total = 0
    for n in range(12_000):
        doc = {"id": f"inst-{n:06d}", "state": "INSTANTIATED", "vnfcs": [
            {"id": f"vnfc-{n}-{k}", "vdu": "masterNode" if k == 0 else "workerNode", "addr": f"10.0.{k}.{n % 250}"}
            for k in range(3)]}
        text = json.dumps(doc, sort_keys=True)
        back = json.loads(text)
        total += len(text) + sum(len(v["id"]) for v in back["vnfcs"])
    return total


def reference_ms() -> float:
    """CPU milliseconds of the fixed workload, the fastest of `ROUNDS` (the least disturbed)."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        _workload()
        best = min(best, time.process_time() - start)
    return best * 1000


def line() -> str:
    """The figure as the benches print it."""
    return f"reference workload {reference_ms():.0f} ms CPU (bench/reference.py: this machine's speed now)"


if __name__ == "__main__":
    print(line())
