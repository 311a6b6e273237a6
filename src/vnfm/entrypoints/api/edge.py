"""The raw ASGI middleware around the whole application: what every request and every response
passes through, in one wrapper of `send` (issue 24 item 4: three nested middlewares each wrapped
`send` and rebuilt the header list).

On the way in: repeated slashes of the path merged (headers.py), the request id (access.py), and
a 406 for an `Accept` that admits none of the route's media types (negotiation.py). On the way
out, on the response's start: a ProblemDetails labelled as the client accepts it, `X-Request-Id`,
then every header name in its canonical spelling with `Version` and `Date` added when missing
(in that order, as the three middlewares did it). After the response: the access line and the
latency for the metrics, whatever happened (500s and 401s too).
"""

from __future__ import annotations

import time

from vnfm.entrypoints.api import negotiation
from vnfm.entrypoints.api.access import Observe, log_request, request_id
from vnfm.entrypoints.api.headers import ASGIApp, Message, Receive, Scope, Send, Versions, finish_headers, merge_slashes
from vnfm.entrypoints.api.problem import PROBLEM_JSON


class Edge:
    def __init__(self, app: ASGIApp, version: str, *, by_prefix: dict[str, str] | None = None,
                 observe: Observe | None = None, add_date: bool = True) -> None:
        """`version`: the `Version` of a response that has none (`by_prefix`: another one for the
        paths under a prefix); `observe`: the metrics' latency of each request."""
        self.app = app
        self.versions = Versions(version, by_prefix)
        self.observe = observe
        self.add_date = add_date

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = merge_slashes(scope)
        version = self.versions.of(scope.get("path", ""))
        rid = request_id(scope)
        scope.setdefault("state", {})["request_id"] = rid
        started = time.monotonic()
        status = 500
        accept = negotiation.accept_of(scope)
        problem_as = negotiation.problem_type(accept)
        relabel = problem_as != PROBLEM_JSON

        async def send_edge(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
                if relabel:
                    headers = negotiation.relabel(headers, problem_as)
                headers.append((b"x-request-id", rid.encode()))
                message = {**message, "headers": finish_headers(headers, version, self.add_date)}
            await send(message)

        try:
            refused = negotiation.refusal(scope, accept, problem_as)
            if refused is not None:
                headers, body = refused
                await send_edge({"type": "http.response.start", "status": 406, "headers": headers})
                await send_edge({"type": "http.response.body", "body": body})
                return
            await self.app(scope, receive, send_edge)
        finally:
            log_request(scope, rid, status, time.monotonic() - started, self.observe)
