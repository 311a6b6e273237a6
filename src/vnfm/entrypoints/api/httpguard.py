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

Past the cap on connections (`limit_concurrency`) uvicorn answers a bare 503 without Retry-After;
`install_busy_answer` makes it a ProblemDetails with `Retry-After`, so clients that back off on 503
(the stock client does not; vnfm's CLI and benches do) come back instead of failing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

from uvicorn.protocols.http import h11_impl
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("vnfm.http")

BUSY_RETRY_AFTER = 1  # seconds: connections free up as fast as requests are answered
_BUSY_BODY = json.dumps({"status": 503, "title": "Service Unavailable",
                         "detail": "the server has as many connections open as it accepts "
                                   "(VNFM_HTTP_MAX_CONNECTIONS); retry after the time in Retry-After"}).encode()


async def busy_answer(scope: Any, receive: Any, send: Any) -> None:
    """What a request past the connection cap gets: 503, Retry-After, a ProblemDetails, close."""
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(_BUSY_BODY)).encode()),
        (b"retry-after", str(BUSY_RETRY_AFTER).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": _BUSY_BODY, "more_body": False})


def install_busy_answer() -> None:
    """uvicorn's h11 protocol calls the module-level `service_unavailable` past `limit_concurrency`:
    replace it (re-check on uvicorn upgrades: tests/api/test_bounded_waits.py fails if it moves)."""
    h11_impl.service_unavailable = busy_answer


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
