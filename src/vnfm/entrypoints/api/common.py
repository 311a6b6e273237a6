"""Helpers shared by the routers: JSON bodies, list queries, the application object."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from vnfm.bootstrap import App
from vnfm.domain.errors import BadRequest
from vnfm.entrypoints.api import query


def app_of(request: Request) -> App:
    return request.app.state.vnfm


async def json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        raise BadRequest("the request has no body; a JSON object is expected")
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    allowed = {"application/json", "application/merge-patch+json", "text/plain", ""}
    if ctype not in allowed:
        raise BadRequest(f"Content-Type {ctype} is not accepted; send application/json")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"malformed JSON body: {exc}") from None


def listing(request: Request, docs: list[dict[str, Any]], default_excluded: Sequence[str]) -> JSONResponse:
    params = request.query_params
    known = {"filter", "all_fields", "fields", "exclude_fields", "exclude_default", "nextpage_opaque_marker"}
    unknown = [k for k in params if k not in known]
    if unknown:
        raise BadRequest(f"unknown query parameter(s): {', '.join(unknown)}")
    flt = query.parse_filter(params["filter"]) if params.get("filter") else None
    all_fields = "all_fields" in params
    fields = [f for f in params.get("fields", "").split(",") if f] or None
    exclude = [f for f in params.get("exclude_fields", "").split(",") if f] or None
    exclude_default = "exclude_default" in params
    out = []
    for doc in docs:
        if flt is not None and not flt.matches(doc):
            continue
        out.append(query.apply_selectors(doc, all_fields=all_fields, fields=fields, exclude_fields=exclude,
                                         exclude_default=exclude_default, default_excluded=default_excluded))
    return JSONResponse(out)
