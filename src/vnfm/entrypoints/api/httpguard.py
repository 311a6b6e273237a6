"""Slow clients cannot hold the server: uvicorn's HTTP/1.1 protocol (h11) with deadlines.

uvicorn closes idle keep-alive connections (`timeout_keep_alive`) and caps the size of an
incomplete request head (h11's `max_incomplete_event_size`), but a client that opens a connection
and sends its head a byte at a time, or stops half-way through a body, holds it for ever. Here:

- a request head must be complete within `head_timeout` of the connection (or of the previous
  response on it), else the connection is closed;
- while a request body is being received, each read must come within `body_timeout` of the
  previous one (an idle bound, so a large upload on a slow link goes on), else it is closed;
- while the application works on a request nothing is timed here (its own deadlines apply).
Closing is logged at DEBUG (the count is in `GuardedH11Protocol.closed`): hundreds of slow clients
write no log lines.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("vnfm.http")


class GuardedH11Protocol(H11Protocol):
    head_timeout: ClassVar[float] = 30.0
    body_timeout: ClassVar[float] = 30.0
    closed: ClassVar[dict[str, int]] = {"head": 0, "body": 0}

    _deadline: asyncio.TimerHandle | None = None

    @classmethod
    def with_timeouts(cls, head: float, body: float) -> type[GuardedH11Protocol]:
        """A subclass with these timeouts (uvicorn takes a protocol class)."""
        return type("GuardedH11Protocol", (cls,), {"head_timeout": head, "body_timeout": body,
                                                   "closed": {"head": 0, "body": 0}})

    def _arm(self, seconds: float, phase: str) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired, phase)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm(self.head_timeout, "head")

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return  # still waiting for a head: its deadline stays
        if cycle.more_body:
            self._arm(self.body_timeout, "body")  # an idle bound: re-armed at every read
        else:
            self._disarm()  # the application's turn

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm(self.head_timeout, "head")  # the next request's head (or keep-alive's close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _expired(self, phase: str) -> None:
        self._deadline = None
        cycle = self.cycle
        waiting_for_client = cycle is None or cycle.response_complete or cycle.more_body
        if not waiting_for_client or self.transport.is_closing():
            return
        self.closed[phase] += 1
        log.debug("closing a connection: request %s not received in time", phase)
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()
