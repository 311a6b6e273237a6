"""The server process's cyclic garbage collector policy (issue 24 item 4: CPU per instantiate).

With CPython's default thresholds (700, 10, 10) a busy server ran a collection every 700 net
container allocations and a full one every ~70,000: each full collection walked every object the
imports made (FastAPI, SQLAlchemy, the Kubernetes client: ~250,000), 150-200 ms each. Measured in
a `vnfm server` under `bench/fleet_load.py --clusters 200 --concurrency 200` (SQLite, one
process): 1.9 s of collection over the process's life with the defaults, 0.55 s with (10,000, 10,
10), 0.22 s with the values below.

`settle()` runs once, after the imports and before the server starts: one collection, then the
survivors are moved out of the collector's sight (`gc.freeze`: what the imports made lives as long
as the process), and the young generation is collected every `YOUNG` allocations. Reference
counting frees non-cyclic garbage at once either way; only cycles wait longer, bounded by the
same thresholds.
"""

from __future__ import annotations

import gc

YOUNG = 50_000  # net container allocations between two young collections (CPython's default: 700)
OLDER = 20  # collections of a generation between two of the next one (default: 10)


def settle() -> None:
    """Collect once, freeze what survives (the imports), and collect less often from now on."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, OLDER, OLDER)
