"""Issue 12.8: the server dies after storing an accepted operation and before its 202 reaches the
client; the CLI's client finds the occurrence by listing the instance's occurrences."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from vnfm.entrypoints.cli.client import ServerUnreachable, VnfmClient

OPS = "/vnflcm/v1/vnf_lcm_op_occs"


class DyingServer:
    """Stores the SCALE occurrence, then breaks the connection (`accept`), or breaks it before
    storing anything; afterwards it is down for `down` list requests (a restart)."""

    def __init__(self, *, accept: bool, down: int = 0) -> None:
        self.accept = accept
        self.down = down
        self.ops: list[dict[str, Any]] = [{"id": "old-1", "vnfInstanceId": "vnf-1", "operation": "SCALE",
                                           "startTime": "2026-11-24T10:00:00Z"}]
        self.lists: list[str] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/scale"):
            if self.accept:
                self.ops.append({"id": "new-2", "vnfInstanceId": "vnf-1", "operation": "SCALE",
                                 "startTime": "2026-11-24T11:00:00Z"})
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        if request.method == "GET" and request.url.path == OPS:
            self.lists.append(request.url.params["filter"])
            if len(self.lists) > 1 and self.down > 0:
                self.down -= 1
                raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
            return httpx.Response(200, json=[o for o in self.ops if o["vnfInstanceId"] == "vnf-1"])
        return httpx.Response(404)


def _client(server: DyingServer) -> VnfmClient:
    c = VnfmClient("http://vnfm", transport=httpx.MockTransport(server.handle), recover_timeout=5)
    c.recover_poll = 0.001
    return c


def test_the_accepted_occurrence_is_found_after_the_server_died_and_came_back() -> None:
    server = DyingServer(accept=True, down=3)
    assert _client(server).scale("vnf-1", {"type": "SCALE_OUT", "aspectId": "a"}) == "new-2"
    assert set(server.lists) == {"(eq,vnfInstanceId,vnf-1)"} and len(server.lists) == 5


def test_a_request_that_was_not_accepted_says_so() -> None:
    server = DyingServer(accept=False)
    with pytest.raises(ServerUnreachable, match="not accepted, send it again"):
        _client(server).scale("vnf-1", {"type": "SCALE_OUT", "aspectId": "a"})
