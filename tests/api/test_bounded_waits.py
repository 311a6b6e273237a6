"""Bounded waits at the HTTP edge (issue 24.3): slow clients are cut off and cannot keep others
out, a database too busy to answer in time is a 503 with Retry-After, client-driven log lines
are rate-limited."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import exc as sa_exc
from starlette.requests import ClientDisconnect

from vnfm.entrypoints.api import problem
from vnfm.entrypoints.api.server import start_in_thread
from vnfm.entrypoints.logsetup import RateLimit

from .conftest import settings_for


def _slow(url: str, n: int, partial: bytes) -> list[socket.socket]:
    host, port = url.removeprefix("http://").split(":")
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, int(port)))
        s.sendall(partial)
        socks.append(s)
    return socks


def _closed(s: socket.socket, timeout: float) -> bool:
    s.settimeout(timeout)
    try:
        return s.recv(1024) == b""
    except (TimeoutError, ConnectionResetError):
        return False


def test_slow_clients_are_cut_off_and_others_are_answered(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, host="127.0.0.1", port=0, http_head_timeout=2.0, http_body_timeout=2.0,
                            http_max_connections=100)
    handle = start_in_thread(settings)
    try:
        heads = _slow(handle.url, 60, b"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: x\r\n")
        bodies = _slow(handle.url, 20, b"POST /vnfpkgm/v1/vnf_packages HTTP/1.1\r\nHost: x\r\n"
                                       b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        with httpx.Client(base_url=handle.url, timeout=5) as c:  # another client is answered meanwhile
            assert c.get("/vnflcm/v1/api_versions").status_code == 200
        assert all(_closed(s, 10.0) for s in heads + bodies)  # cut off after their deadline
        with httpx.Client(base_url=handle.url, timeout=5) as c:  # slots freed: 80 more connections fine
            assert c.get("/vnflcm/v1/api_versions").status_code == 200
        for s in heads + bodies:
            s.close()
    finally:
        handle.stop()


@pytest.mark.parametrize("error", [
    sa_exc.TimeoutError("QueuePool limit of size 10 overflow 10 reached"),
    sa_exc.OperationalError("UPDATE ...", {}, Exception("database is locked")),
])
async def test_a_busy_database_is_a_503_with_retry_after(error: Exception) -> None:
    app = FastAPI()
    problem.install(app)

    @app.get("/x")
    def busy() -> None:
        raise error

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        r = await c.get("/x")
    assert r.status_code == 503 and r.headers["Retry-After"] == "2"
    assert r.json()["title"] == "Service Unavailable"


@pytest.mark.parametrize(("error", "status"), [
    (ClientDisconnect(), 400),
    (sa_exc.TimeoutError("QueuePool limit of size 10 overflow 10 reached"), 503),
    (sa_exc.OperationalError("UPDATE ...", {}, Exception("database is locked")), 503),
])
async def test_client_driven_errors_do_not_reach_the_server_as_exceptions(error: Exception, status: int) -> None:
    """A client cut off mid-body (ClientDisconnect) or a busy database is answered by a handler
    that does not re-raise: Starlette re-raises whatever its catch-all `Exception` handler answered,
    and uvicorn then logs an ~90-line traceback per request (a log flood from slow clients)."""
    app = FastAPI()
    problem.install(app)

    @app.get("/x")
    def fails() -> None:
        raise error

    transport = httpx.ASGITransport(app=app)  # raise_app_exceptions: what the server would log
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        r = await c.get("/x")
    assert r.status_code == status


def test_client_driven_log_lines_are_rate_limited() -> None:
    now = [0.0]
    limit = RateLimit(burst=3, window=10.0, clock=lambda: now[0])

    def rec(name: str, msg: str, status: int | None = None) -> logging.LogRecord:
        r = logging.LogRecord(name, logging.WARNING, "", 0, msg, None, None)
        if status is not None:
            r.status = status
        return r

    kept = [limit.filter(rec("uvicorn.error", "Invalid HTTP request received.")) for _ in range(1000)]
    assert sum(kept) == 3 and limit.dropped == 997
    assert all(limit.filter(rec("vnfm.service.lcm", "op failed")) for _ in range(10))  # not client-driven
    assert all(limit.filter(rec("vnfm.access", "GET / 200", 200)) for _ in range(10))
    assert sum(limit.filter(rec("vnfm.access", "GET / 404", 404)) for _ in range(10)) == 3
    now[0] = 11.0
    first = rec("uvicorn.error", "Invalid HTTP request received.")
    assert limit.filter(first) and "997 similar lines left out" in first.getMessage()


def test_past_the_connection_cap_the_answer_says_when_to_come_back(tmp_path: Path) -> None:
    """uvicorn's own answer past `limit_concurrency` is a bare 503; vnfm's carries Retry-After and a
    ProblemDetails, so a client that backs off returns (a 5,000-client burst on the 4,096 default)."""
    settings = settings_for(tmp_path, host="127.0.0.1", port=0, http_max_connections=4)
    handle = start_in_thread(settings)
    try:
        held = _slow(handle.url, 4, b"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: x\r\n")
        with httpx.Client(base_url=handle.url, timeout=5) as c:
            r = c.get("/vnflcm/v1/api_versions")
        assert r.status_code == 503 and r.headers["Retry-After"] == "1"
        assert r.headers["content-type"] == "application/problem+json"
        assert "VNFM_HTTP_MAX_CONNECTIONS" in r.json()["detail"]
        for s in held:
            s.close()
        deadline = time.monotonic() + 10
        while True:  # the server notices the closed connections
            with httpx.Client(base_url=handle.url, timeout=5) as c:
                if c.get("/vnflcm/v1/api_versions").status_code == 200:
                    break
            assert time.monotonic() < deadline, "still refused after the connections closed"
            time.sleep(0.05)
    finally:
        handle.stop()


def test_listen_backlog_as_deep_as_the_connection_cap(tmp_path: Path) -> None:
    """uvicorn's default backlog (2048) overflowed in a burst of 5,000 connects: a handshake the
    kernel drops on overflow is reset after the client sent its request (ReadError(''))."""
    from vnfm.entrypoints.api.server import http_options

    options = http_options(settings_for(tmp_path, http_max_connections=4096))
    assert options["backlog"] == 4096 and options["limit_concurrency"] == 4096
    assert http_options(settings_for(tmp_path, http_max_connections=100))["backlog"] == 2048
