"""Content negotiation (RFC 9110 12.5.1, SOL013 4.7, 6.4), applied by the raw ASGI middleware `edge.Edge`.

- A request whose `Accept` admits none of the media types its route produces is answered 406
  before the route runs (nothing is created).
- A ProblemDetails body is `application/problem+json` when the client accepts it (or sends no
  `Accept`), and `application/json` when that is all it accepts (the ETSI NFV-TST 010 suites and
  several NFVOs send `Accept: application/json`); the body is the same.

The Accept header is read by the few lines below (media ranges with their q values; parameters
other than q are ignored): no library of the dependency set parses it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vnfm.entrypoints.api.headers import Scope
from vnfm.entrypoints.api.problem import PROBLEM_JSON, problem_bytes

JSON = "application/json"
# Routes whose successful answers are not JSON: (method, path pattern) -> the media types they produce.
_PRODUCES: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = [
    ("GET", re.compile(r"^/vnfpkgm/v1/vnf_packages/[^/]+/package_content/?$"), ("application/zip",)),
    ("GET", re.compile(r"^/vnfpkgm/v1/vnf_packages/[^/]+/vnfd/?$"), ("application/zip", "text/plain")),
    ("GET", re.compile(r"^/vnfpkgm/v1/vnf_packages/[^/]+/artifacts/.+"), ("*/*",)),  # the artifact's own type
    ("GET", re.compile(r"^/metrics/?$"), ("text/plain",)),
    ("GET", re.compile(r"^/console(/.*)?$"), ("*/*",)),  # the web console: HTML, its CSS and script, JSON
]


def accepted_ranges(header: str) -> list[tuple[str, float]]:
    """'text/html;q=0.5, application/*' -> [('text/html', 0.5), ('application/*', 1.0)] (lower case)."""
    ranges: list[tuple[str, float]] = []
    for item in header.split(","):
        media, *params = (p.strip() for p in item.split(";"))
        if not media:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        ranges.append((media.lower(), q))
    return ranges


def quality(media_type: str, ranges: list[tuple[str, float]]) -> float:
    """The q value `ranges` give `media_type` (the most specific matching range decides; 0: not accepted)."""
    main = media_type.split("/")[0]
    best = (-1, 0.0)
    for media, q in ranges:
        rank = 3 if media == media_type else 2 if media == f"{main}/*" else 1 if media == "*/*" else -1
        if rank > best[0]:
            best = (rank, q)
    return best[1] if best[0] >= 0 else 0.0


def produced(method: str, path: str) -> tuple[str, ...]:
    for m, pattern, types in _PRODUCES:
        if method in (m, "HEAD" if m == "GET" else m) and pattern.match(path):
            return types
    return (JSON,)


def problem_type(accept: str) -> str:
    """The media type of a ProblemDetails for a client that sent `accept` (remembered for the
    few short values clients send; a long one is worked out each time: the cache stays small)."""
    return _problem_type(accept) if len(accept) <= _CACHED_LEN else _problem_type.__wrapped__(accept)


_CACHED_LEN = 256


@lru_cache(maxsize=256)
def _problem_type(accept: str) -> str:
    if not accept.strip():
        return PROBLEM_JSON
    ranges = accepted_ranges(accept)
    if quality(PROBLEM_JSON, ranges) > 0:
        return PROBLEM_JSON
    if quality(JSON, ranges) > 0:
        return JSON
    return PROBLEM_JSON  # accepts neither: RFC 9110 lets an error be sent in a type not asked for


def accept_of(scope: Scope) -> str:
    return ", ".join(v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"accept")


def _acceptable(accept: str, types: tuple[str, ...]) -> bool:
    ranges = accepted_ranges(accept)
    return any(quality(t, ranges) > 0 or (t == "*/*" and q > 0) for t in types for _, q in ranges)


_acceptable_cached = lru_cache(maxsize=256)(_acceptable)  # clients send a few distinct Accept values


def refusal(scope: Scope, accept: str, problem_as: str) -> tuple[list[tuple[bytes, bytes]], bytes] | None:
    """The 406's headers and body when `accept` admits none of the types the route produces."""
    if not accept.strip():
        return None
    types = produced(scope.get("method", "GET"), scope.get("path", ""))
    if (_acceptable_cached if len(accept) <= _CACHED_LEN else _acceptable)(accept, types):
        return None
    body = problem_bytes(406, "Not Acceptable", f"Accept {accept[:200]!r}: {scope.get('path', '')} is "
                         f"served as {' or '.join(types)}")
    return [(b"content-type", problem_as.encode()), (b"content-length", str(len(body)).encode())], body


def relabel(headers: list[tuple[bytes, bytes]], problem_as: str) -> list[tuple[bytes, bytes]]:
    """A ProblemDetails labelled `problem_as` (the same body)."""
    return [(k, problem_as.encode()) if k.lower() == b"content-type"
            and v.split(b";")[0].strip().lower() == _PROBLEM else (k, v) for k, v in headers]


_PROBLEM = PROBLEM_JSON.encode()
