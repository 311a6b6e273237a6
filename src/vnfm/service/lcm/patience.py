"""The engine's database work waits out a busy database instead of failing the operation.

Requests get a bounded wait and a 503 with Retry-After when the database is too busy (no pool
connection within `db_pool_timeout`, a lock or statement timeout, SQLite's busy timeout): the
client tries again. The engine has no client to try again: an operation whose checkpoint or load
met such a wait used to end FAILED_TEMP although nothing had failed (4,000 instantiates at once on
one process: "QueuePool limit ... reached"). Here such a call is made again, with jittered
exponential backoff, until `within` seconds have passed; any other error is raised at once.

What counts as busy is the database adapter's (`vnfm.adapters.db.is_busy`, given by bootstrap);
a unit of work that failed that way was rolled back, so trying the same call again is safe.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


def _never(exc: BaseException) -> bool:
    return False


@dataclass
class Patience:
    busy: Callable[[BaseException], bool] = _never
    within: float = 120.0  # seconds: past this a busy database fails the call after all
    first_delay: float = 0.05
    max_delay: float = 2.0
    retried: int = field(default=0, init=False)  # calls made again (a figure for tests and benches)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(*args, **kwargs)` in a worker thread, made again while the database is busy."""
        deadline = time.monotonic() + self.within
        delay = self.first_delay
        while True:
            try:
                return await asyncio.to_thread(fn, *args, **kwargs)
            except Exception as exc:
                if not self.busy(exc) or time.monotonic() + delay > deadline:
                    raise
                self.retried += 1
                log.debug("database busy (%s); trying again in %.2fs", type(exc).__name__, delay)
            await asyncio.sleep(delay * (0.5 + random.random()))  # noqa: S311 (jitter, not security)
            delay = min(delay * 2, self.max_delay)
