"""Slow clients cannot hold the server: uvicorn's HTTP/1.1 protocols with deadlines.

uvicorn closes idle keep-alive connections (`timeout_keep_alive`) and its h11 protocol caps the
size of an incomplete request head (h11's `max_incomplete_event_size`), but a client that opens a
connection and sends its head a byte at a time, or stops half-way through a body, holds it for
ever. Here, for either protocol (httptools, the C parser, when installed; h11 otherwise):

- a request head must be complete within `head_timeout` of the connection (or of the previous
  response on it), else the connection is closed;
- while a request body is being received, each read must come within `body_timeout` of the
  previous one (an idle bound, so a large upload on a slow link goes on), else it is closed;
- while the application works on a request nothing is timed here (its own deadlines apply);
- a request head larger than `MAX_HEAD` is answered 400 and the connection closed (h11 does it
  itself; for httptools, which has no such bound, the bytes received since the last head count).
Closing is logged at DEBUG (the count is in the protocol class's `closed`): hundreds of slow
clients write no log lines.

Past the cap on connections (`limit_concurrency`) uvicorn answers a bare 503 without Retry-After;
`install_busy_answer` makes it a ProblemDetails with `Retry-After`, so clients that back off on 503
(the stock client does not; vnfm's CLI and benches do) come back instead of failing. That answer
closes the connection after a lingering read: the request's body is read and dropped first (up to
`LINGER_BYTES` and `LINGER_S`), since a socket closed with unread bytes, or receiving more after
its close, is reset by the kernel, and a reset can discard the answer before the client reads it
(instantiate POSTs "closed unread" in a burst of 5,000).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

from uvicorn.protocols.http import h11_impl
from uvicorn.protocols.http.h11_impl import H11Protocol

try:  # uvicorn's httptools protocol (the C parser llhttp); h11 when httptools is not installed
    from uvicorn.protocols.http import httptools_impl
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools is a dependency; h11 stays the fallback
    httptools_impl = None  # type: ignore[assignment]
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

from vnfm.entrypoints.api.headers import canonical_cached

log = logging.getLogger("vnfm.http")

MAX_HEAD = 16 * 1024  # bytes of a request head (request line and headers)
BUSY_RETRY_AFTER = 1  # seconds: connections free up as fast as requests are answered
_BUSY_BODY = json.dumps({"status": 503, "title": "Service Unavailable",
                         "detail": "the server has as many connections open as it accepts "
                                   "(VNFM_HTTP_MAX_CONNECTIONS); retry after the time in Retry-After"}).encode()


LINGER_BYTES = 1024 * 1024  # a busy answer reads and drops at most this much of a request body
LINGER_S = 2.0  # seconds: and for at most this long


async def _drop_body(scope: Any, receive: Any) -> None:
    """Read the request's body and drop it, up to `LINGER_BYTES` and `LINGER_S` (not at all for a
    client that waits for `100 Continue` before sending it, or declares a larger one)."""
    declared, expects = 0, False
    for name, value in scope.get("headers", ()):
        name = name.lower()
        if name == b"content-length" and value.isdigit():
            declared = int(value)
        elif name == b"expect":
            expects = value.lower() == b"100-continue"
    if expects or declared > LINGER_BYTES:
        return
    loop = asyncio.get_running_loop()
    deadline, read = loop.time() + LINGER_S, 0
    while read <= LINGER_BYTES:
        try:
            message = await asyncio.wait_for(receive(), deadline - loop.time())
        except TimeoutError:
            return
        if message["type"] != "http.request":
            return  # the client went away
        read += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def busy_answer(scope: Any, receive: Any, send: Any) -> None:
    """What a request past the connection cap gets, after its body (`_drop_body`): 503,
    Retry-After, a ProblemDetails, close."""
    await _drop_body(scope, receive)
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(_BUSY_BODY)).encode()),
        (b"retry-after", str(BUSY_RETRY_AFTER).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": _BUSY_BODY, "more_body": False})


def install_busy_answer() -> None:
    """uvicorn's protocols call their module-level `service_unavailable` past `limit_concurrency`:
    replace it (re-check on uvicorn upgrades: tests/api/test_bounded_waits.py fails if it moves)."""
    h11_impl.service_unavailable = busy_answer
    if httptools_impl is not None:
        httptools_impl.service_unavailable = busy_answer


class _Guard:
    """The deadlines, mixed into one of uvicorn's protocols (uses their `cycle`, `more_body`,
    `response_complete`, `message_event` and `transport`: re-check on uvicorn upgrades)."""

    head_timeout: ClassVar[float] = 30.0
    body_timeout: ClassVar[float] = 30.0
    closed: ClassVar[dict[str, int]] = {"head": 0, "body": 0}

    _deadline: asyncio.TimerHandle | None = None
    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: Any

    @classmethod
    def with_timeouts(cls, head: float, body: float) -> type[Any]:
        """A subclass with these timeouts (uvicorn takes a protocol class)."""
        return type(cls.__name__, (cls,), {"head_timeout": head, "body_timeout": body,
                                           "closed": {"head": 0, "body": 0}})

    def _arm(self, seconds: float, phase: str) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired, phase)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm(self.head_timeout, "head")

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return  # still waiting for a head: its deadline stays
        if cycle.more_body:
            self._arm(self.body_timeout, "body")  # an idle bound: re-armed at every read
        else:
            self._disarm()  # the application's turn

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self._arm(self.head_timeout, "head")  # the next request's head (or keep-alive's close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

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


class GuardedH11Protocol(_Guard, H11Protocol):
    """h11 (pure Python): the fallback when httptools is not installed."""


class _SpelledHead:
    """A response's transport for uvicorn's httptools protocol, which writes every header name in
    lower case: the head's names are written in their canonical spelling again (as h11 writes
    what `edge.Edge` made; ETSI suites read `Location`, `Version` ... case-sensitively). The
    writes up to the first final (non-1xx) head are heads; the body's writes pass untouched."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._head_pending = True

    def write(self, data: bytes) -> None:
        if self._head_pending and data.startswith(b"HTTP/1."):
            self._head_pending = data.startswith(b"HTTP/1.1 1")  # 100 Continue: the head follows
            data = spelled(data)
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def spelled(head: bytes) -> bytes:
    """A response head with every header name canonical (b"content-type: x" -> b"Content-Type: x")."""
    status, _, rest = head.partition(b"\r\n")
    lines = rest.split(b"\r\n")
    for i, line in enumerate(lines):
        name, sep, value = line.partition(b":")
        if sep:
            lines[i] = canonical_cached(name) + b":" + value
    return status + b"\r\n" + b"\r\n".join(lines)


if HttpToolsProtocol is not None:
    class GuardedHttpToolsProtocol(_Guard, HttpToolsProtocol):
        """httptools (llhttp, C): the default when installed. llhttp has no bound on a request
        head's size: the bytes read while a head is incomplete are counted here (h11's bound).
        Each response's head keeps its header names' spelling (`_SpelledHead`)."""

        _in_head = True  # a head is being read (from a message's end to its headers' end)
        _head_bytes = 0  # received while it is
        _heads = 0  # heads completed on this connection

        def data_received(self, data: bytes) -> None:
            before, heads = self._in_head, self._heads
            super().data_received(data)
            if not (before and self._in_head and heads == self._heads) or self.transport.is_closing():
                return  # only reads that leave the same head incomplete count (not a body's bytes)
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD:
                msg = "Invalid HTTP request received."  # as uvicorn answers a head h11 finds too large
                self.logger.warning(msg)
                self._disarm()
                self.send_400_response(msg)

        def on_headers_complete(self) -> None:
            self._in_head, self._head_bytes, self._heads = False, 0, self._heads + 1
            super().on_headers_complete()
            cycle = self.cycle  # made just now; its task has not run yet
            if cycle is not None and not isinstance(cycle.transport, _SpelledHead):
                cycle.transport = _SpelledHead(cycle.transport)

        def on_message_complete(self) -> None:
            self._in_head = True
            super().on_message_complete()
else:  # pragma: no cover
    GuardedHttpToolsProtocol = None  # type: ignore[assignment,misc]


def guarded_protocol(head: float, body: float, parser: str = "auto") -> type[Any]:
    """The guarded protocol class with these timeouts: httptools when installed (`parser` "auto"
    or "httptools"), else h11."""
    use_httptools = parser in ("auto", "httptools") and GuardedHttpToolsProtocol is not None
    base: type[_Guard] = GuardedHttpToolsProtocol if use_httptools else GuardedH11Protocol
    return base.with_timeouts(head, body)
