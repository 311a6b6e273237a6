"""Where the server connects for a caller: loopback, link-local and metadata addresses are refused
after name resolution and on every redirect hop, unless a setting allows them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from vnfm.adapters.remote.egress import EgressPolicy, EgressRefused, egress_client


def test_policy() -> None:
    default = EgressPolicy.of()
    for address in ("127.0.0.1", "127.8.9.1", "::1", "169.254.169.254", "169.254.1.1", "fe80::1", "0.0.0.0",
                    "::ffff:127.0.0.1", "fd00:ec2::254", "224.0.0.1"):
        assert not default.permits(address), address
    for address in ("192.0.2.10", "10.1.2.3", "2001:db8::1"):
        assert default.permits(address), address
    private = EgressPolicy.of(deny=["10.0.0.0/8"])
    assert not private.permits("10.1.2.3") and private.permits("192.0.2.10")
    assert EgressPolicy.of(allow=["127.0.0.0/8"]).permits("127.0.0.1")


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith("/hop"):
            self.send_response(302)
            self.send_header("Location", self.path.removeprefix("/hop"))
        else:
            self.send_response(204)
        self.end_headers()


@pytest.fixture
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


async def test_refused_before_connecting_and_on_each_redirect_hop(server: str) -> None:
    async with egress_client(EgressPolicy.of(), follow_redirects=True) as client:
        with pytest.raises(EgressRefused):
            await client.get(server + "/")
        with pytest.raises(EgressRefused):
            await client.get(server.replace("127.0.0.1", "localhost") + "/")  # by name too
    only_this = EgressPolicy.of(allow=["127.0.0.1/32"])
    async with egress_client(only_this, follow_redirects=True) as client:
        assert (await client.get(server + "/")).status_code == 204
        port = server.rsplit(":", 1)[1]
        with pytest.raises(EgressRefused):  # the first hop is allowed, the redirect target is not
            await client.get(f"{server}/hophttp://127.0.0.2:{port}/")
        with pytest.raises(EgressRefused):
            await client.get(f"{server}/hophttp://169.254.169.254/latest/meta-data/")
    assert issubclass(EgressRefused, httpx.HTTPError)  # callers' `except httpx.HTTPError` covers it
