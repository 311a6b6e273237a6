"""The server's HTTP/1.1 protocols (issue 24 item 4): httptools (C) when installed, h11 otherwise,
both with the same guards: slow heads and bodies cut off, a request head bounded in size, the
busy answer past the connection cap."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from vnfm.entrypoints.api import httpguard
from vnfm.entrypoints.api.server import ServerHandle, http_options, start_in_thread

from .conftest import settings_for


@pytest.fixture(params=["httptools", "h11"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "h11":  # as on a machine without httptools
        monkeypatch.setattr(httpguard, "GuardedHttpToolsProtocol", None)
    return str(request.param)


@pytest.fixture
def server(tmp_path: Path, parser: str) -> Iterator[ServerHandle]:
    settings = settings_for(tmp_path, host="127.0.0.1", port=0, http_head_timeout=1.0, http_body_timeout=1.0,
                            http_max_connections=50)
    handle = start_in_thread(settings)
    try:
        yield handle
    finally:
        handle.stop()


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)))
    s.settimeout(10.0)
    return s


def _read_all(s: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := s.recv(65536):
            chunks.append(chunk)
    except (TimeoutError, ConnectionResetError):
        pass
    return b"".join(chunks)


def test_the_protocol_is_httptools_when_installed(tmp_path: Path, parser: str) -> None:
    chosen = http_options(settings_for(tmp_path))["http"]
    expected = httpguard.GuardedHttpToolsProtocol if parser == "httptools" else httpguard.GuardedH11Protocol
    assert expected is not None and issubclass(chosen, expected)
    assert chosen.head_timeout == settings_for(tmp_path).http_head_timeout


def test_slow_heads_and_bodies_are_cut_off(server: ServerHandle) -> None:
    head = _connect(server.url)
    head.sendall(b"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: x\r\n")
    body = _connect(server.url)
    body.sendall(b"POST /vnfpkgm/v1/vnf_packages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n{")
    with httpx.Client(base_url=server.url, timeout=5) as c:  # answered meanwhile
        assert c.get("/vnflcm/v1/api_versions").status_code == 200
    assert _read_all(head) == b""  # closed after the head deadline, nothing answered
    assert _read_all(body) == b""  # closed after the body's idle deadline
    head.close()
    body.close()


@pytest.mark.parametrize(("header_bytes", "refused"), [(12 * 1024, False), (40 * 1024, True)])
def test_an_incomplete_request_head_is_bounded_in_size(server: ServerHandle, header_bytes: int,
                                                        refused: bool) -> None:
    """Past 16 kB of a head still incomplete: 400 and the connection closed (before the head's
    deadline), with either parser."""
    s = _connect(server.url)
    filler = b"".join(b"X-Filler-%d: %s\r\n" % (i, b"a" * 1000) for i in range(header_bytes // 1000))
    s.sendall(b"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + filler)
    if not refused:
        s.sendall(b"\r\n")  # the head complete
    s.settimeout(0.9)  # under the head deadline (1 s): the answer is the size bound's
    answer = _read_all(s)
    s.close()
    status_line = answer.split(b"\r\n", 1)[0]
    if refused:
        assert status_line == b"HTTP/1.1 400 Bad Request" and answer.endswith(b"Invalid HTTP request received.")
    else:
        assert status_line == b"HTTP/1.1 200 OK"


def test_a_large_body_is_not_counted_as_a_head(tmp_path: Path, parser: str) -> None:
    """An answer sent before the body was read (a 401 here) leaves the body's bytes unread: they
    are not a request head, so no second answer (400) follows on the connection."""
    handle = start_in_thread(settings_for(tmp_path, host="127.0.0.1", port=0, auth_token="t0ken-for-the-test"))
    try:
        s = _connect(handle.url)
        body = b"[" + b"1," * 50_000 + b"1]"
        s.sendall(b"POST /vnflcm/v1/vnf_instances HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        s.shutdown(socket.SHUT_WR)
        answer = _read_all(s)
        s.close()
        assert answer.startswith(b"HTTP/1.1 401 ")
        assert b"Invalid HTTP request received." not in answer and answer.count(b"HTTP/1.1 ") == 1
    finally:
        handle.stop()


def test_header_names_keep_their_spelling_on_the_wire(server: ServerHandle) -> None:
    """httptools writes names in lower case: the guarded protocol spells them as h11 sends them."""
    s = _connect(server.url)
    s.sendall(b"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head = _read_all(s).split(b"\r\n\r\n", 1)[0]
    s.close()
    names = [line.split(b":", 1)[0] for line in head.split(b"\r\n")[1:]]
    assert {b"Content-Type", b"Content-Length", b"Version", b"Date", b"X-Request-Id"} <= set(names)
    assert not [n for n in names if n.islower()], head


def test_a_head_is_spelled_name_by_name() -> None:
    head = b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\nwww-authenticate: Bearer a:b\r\n" \
           b"etag: \"x\"\r\nx-request-id: 1\r\n\r\n"
    assert httpguard.spelled(head) == b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n" \
                                      b"WWW-Authenticate: Bearer a:b\r\nETag: \"x\"\r\nX-Request-Id: 1\r\n\r\n"


def _answer(s: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection."""
    s.settimeout(timeout)
    got = b""
    while chunk := s.recv(65536):
        got += chunk
    return got


def test_the_busy_answer_reads_the_body_before_it_closes(tmp_path: Path, parser: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the cap the 503 waits for the request's body (a close with unread bytes, or bytes still
    arriving, is a reset that can discard the answer): it comes once the body is in, or after
    LINGER_S when the body stops coming, and the connection is then closed."""
    monkeypatch.setattr(httpguard, "LINGER_S", 1.5)
    settings = settings_for(tmp_path, host="127.0.0.1", port=0, http_max_connections=4, http_body_timeout=30.0)
    handle = start_in_thread(settings)
    try:
        held = [_connect(handle.url) for _ in range(4)]
        for s in held:
            s.sendall(b"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: x\r\n")
        body = b'{"vnfdId": "' + b"x" * 200_000 + b'"}'
        head = (b"POST /vnflcm/v1/vnf_instances HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        late, stalled = _connect(handle.url), _connect(handle.url)
        for s in (late, stalled):
            s.sendall(head + body[:1000])
        time.sleep(0.5)
        late.setblocking(False)
        with pytest.raises(BlockingIOError):  # no answer while the body is still coming
            late.recv(1024)
        late.setblocking(True)
        late.sendall(body[1000:])
        answer = _answer(late, 10.0)  # the whole answer, then the close (a reset raises here)
        assert answer.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in answer.lower()
        started = time.monotonic()
        answer = _answer(stalled, 10.0)  # its body never completes: answered after LINGER_S
        assert answer.startswith(b"HTTP/1.1 503") and time.monotonic() - started < 5.0
        for s in (*held, late, stalled):
            s.close()
    finally:
        handle.stop()
