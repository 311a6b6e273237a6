"""JSON request bodies read defensively: a size limit while reading, a bounded nesting depth
(deep documents would otherwise end in RecursionError somewhere in the stack: a 500), and no
control characters where the data model has no use for them (PostgreSQL refuses NUL in text)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from vnfm.domain.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from vnfm.packaging.stream import read_limited
from vnfm.service.requests import refuse_control_characters

MAX_JSON_BYTES = 1024 * 1024  # the largest seed request is a few KiB
MAX_JSON_DEPTH = 32  # the deepest seed request nests 6 levels
# text/plain and none: clients that send JSON without saying so (the body must still be JSON)
_ACCEPTED_TYPES = {"application/json", "application/merge-patch+json", "text/plain", ""}


async def read_body(request: Request, limit: int = MAX_JSON_BYTES) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"the request body of {declared} bytes is over the limit of {limit} bytes")
    return await read_limited(request.stream(), limit, "the request body")


def nesting_depth(doc: Any, limit: int) -> int:
    """The nesting depth of a parsed JSON document (iterative; stops once past `limit`)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((child, depth) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_json(raw: bytes, content_type: str) -> Any:
    ctype = content_type.split(";")[0].strip().lower()
    if ctype not in _ACCEPTED_TYPES:
        raise UnsupportedMediaType(f"Content-Type {ctype[:80]} is not accepted here; send application/json")
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise BadRequest(f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"malformed JSON body: {exc}") from None
    if nesting_depth(doc, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise BadRequest(f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels")
    refuse_control_characters(doc)
    return doc


_REQUIRED: Any = object()


async def json_body(request: Request, *, empty: Any = _REQUIRED) -> Any:
    """The request's JSON document; `empty` is what an empty body means (default: a 400)."""
    raw = await read_body(request)
    if not raw.strip():
        if empty is _REQUIRED:
            raise BadRequest("the request has no body; a JSON object is expected")
        return empty
    return parse_json(raw, request.headers.get("content-type", "application/json"))


async def no_body(request: Request, task: str) -> None:
    """A task that takes no request body (retry, rollback, fail): one sent is refused, not ignored
    (an empty body or `{}` is none)."""
    raw = await read_body(request)
    if raw.strip() and parse_json(raw, request.headers.get("content-type", "application/json")) != {}:
        raise BadRequest(f"{task} takes no request body (SOL003); send none")
