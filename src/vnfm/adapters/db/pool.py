"""`LingeringPool`: a connection pool whose overflow connections are kept while they are used.

SQLAlchemy's QueuePool closes a connection beyond `pool_size` as soon as it is returned, so under
steady load above `pool_size` every unit of work past it opens a new connection: on PostgreSQL a
new backend (a fork, authentication, its catalog caches warmed again) plus the dialect's and the
driver's set-up on this side. Measured (`bench/fleet_load.py --db postgresql`, 200 clusters, pools
4 + 2): 102 sessions for one process's 14 connections; with the overflow kept, 16.

Here the pool holds up to `pool_size + max_overflow` connections (the same bound), handed out
last-in first-out, so the connections that are not needed sink to the bottom of the stack; one
that has sat there idle for `LINGER_S` while more than `pool_size` are open is closed at the next
return. Under load the overflow stays open; when the load falls, the pool shrinks back to
`pool_size` within about `LINGER_S` (closing happens on a return: an idle process's pollers return
connections every few seconds).
"""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from sqlalchemy.pool import ConnectionPoolEntry, QueuePool
from sqlalchemy.util.queue import Queue

LINGER_S = 60.0  # an overflow connection idle this long (while more than pool_size are open) is closed


class LingeringPool(QueuePool):
    def __init__(self, creator: Any, pool_size: int = 5, max_overflow: int = 10, **kw: Any) -> None:
        if max_overflow < 0:
            raise ValueError("LingeringPool needs a bounded overflow (max_overflow >= 0)")
        kw.pop("use_lifo", None)  # always LIFO: unneeded connections sink and age
        super().__init__(creator, pool_size=pool_size + max_overflow, max_overflow=0, use_lifo=True, **kw)
        self.keep = pool_size  # connections kept open however long they are idle
        self.linger = LINGER_S
        self._returned: dict[int, float] = {}  # id(record) -> when it was last returned (monotonic)
        self._shed_lock = threading.Lock()

    def recreate(self) -> QueuePool:  # Engine.dispose(): the same bounds, not size + overflow kept
        new = super().recreate()  # QueuePool passes pool_size=size + overflow, max_overflow=0
        assert isinstance(new, LingeringPool)
        new.keep, new.linger = self.keep, self.linger
        return new

    def open_count(self) -> int:
        """Connections open now (checked in or out)."""
        return self._overflow + self._pool.maxsize

    def _do_return_conn(self, record: ConnectionPoolEntry) -> None:
        self._returned[id(record)] = time.monotonic()
        super()._do_return_conn(record)  # never full: at most maxsize connections exist
        self._shed()

    def _shed(self) -> None:
        """Close the longest-idle connections past `keep` that have been idle for `linger`."""
        if self.open_count() <= self.keep or not self._shed_lock.acquire(blocking=False):
            return
        try:
            cutoff = time.monotonic() - self.linger
            while self.open_count() > self.keep:
                q = cast("Queue[ConnectionPoolEntry]", self._pool)  # QueuePool's queue class
                with q.mutex:  # LIFO: the deque's left end is the connection idle the longest
                    if not q.queue or self._returned.get(id(q.queue[0]), cutoff) > cutoff:
                        return
                    record = q.queue.popleft()
                    q.not_full.notify()
                self._returned.pop(id(record), None)
                try:
                    record.close()
                finally:
                    self._dec_overflow()
        finally:
            self._shed_lock.release()
