"""Byte ranges (RFC 9110 14) on package content and artifacts (SOL005 9.4.5.3.2, 9.4.7.3.2):
one range answers 206 with Content-Range; a range past the end answers 416 with
`Content-Range: bytes */<size>`; several ranges or a malformed header are ignored (the whole
content, as RFC 9110 allows)."""

from __future__ import annotations

import re

from fastapi import Request, Response

from vnfm.entrypoints.api.problem import problem_response

_SPEC = re.compile(r"bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*")


def _bounds(header: str, size: int) -> tuple[int, int] | None | bool:
    """(first, last) inclusive; None to ignore the header; False when unsatisfiable."""
    m = _SPEC.fullmatch(header.strip())
    if m is None or (not m[1] and not m[2]):
        return None
    if not m[1]:  # suffix: the last N bytes
        n = int(m[2])
        if n == 0 or size == 0:
            return False
        return max(size - n, 0), size - 1
    first = int(m[1])
    if m[2] and int(m[2]) < first:
        return None
    if first >= size:
        return False
    last = int(m[2]) if m[2] else size - 1
    return first, min(last, size - 1)


def ranged(request: Request, data: bytes, media_type: str) -> Response:
    header = request.headers.get("range")
    bounds = _bounds(header, len(data)) if header else None
    if bounds is False:
        resp = problem_response(416, "Range Not Satisfiable",
                                f"the range {header!r} is outside the content ({len(data)} bytes)")
        resp.headers["Content-Range"] = f"bytes */{len(data)}"
        return resp
    if not isinstance(bounds, tuple):
        return Response(data, media_type=media_type, headers={"Accept-Ranges": "bytes"})
    first, last = bounds
    return Response(data[first:last + 1], status_code=206, media_type=media_type,
                    headers={"Accept-Ranges": "bytes", "Content-Range": f"bytes {first}-{last}/{len(data)}"})
