"""List responses (SOL013 5.2 filter, 5.3 selectors, 5.4.2 paging) built in the database, page by page.

The filter's terms on top-level attributes go to the repository as `Condition`s, which narrows
the rows in SQL where it can (vnfm.adapters.db.paging) and pages by key after the marked item.
Every term is then checked on each row the database returned, so the semantics stay exactly
those of `query.Filter`: the database only spares the rows that cannot match.

Rows are read in chunks of a page (plus one, to know whether another follows). A filter the
database cannot evaluate is applied chunk by chunk, reading at most `SCAN_PAGES` pages' worth of
rows per request: past that, the response carries what matched so far with a `Link` to continue
(SOL013 lets a page hold fewer items than the page size), so no request reads the whole table.
All of it runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from vnfm.domain.errors import BadRequest, NotFound
from vnfm.entrypoints.api import query
from vnfm.service.ports import Condition

E = TypeVar("E")

SCAN_PAGES = 5  # rows read per request: at most this many pages' worth (residual filters)
UNPAGED_CHUNK = 500  # chunk size when paging is off (page_size <= 0)


@dataclass
class ListSource(Generic[E]):
    """Where a list comes from: `fetch(conditions, after_id, limit)` (a repository page), `doc`
    (the API document of one entity), `ident` (its id, the paging key)."""

    fetch: Callable[[Sequence[Condition], str | None, int], list[E]]
    doc: Callable[[E], dict[str, Any]]
    ident: Callable[[E], str]
    # The document without some top-level attributes (not built at all), when the view can, and
    # the page read without what only those attributes need, when the repository can.
    lean: Callable[[E, frozenset[str]], dict[str, Any]] | None = None
    fetch_lean: Callable[[Sequence[Condition], str | None, int, frozenset[str]], list[E]] | None = None


def not_shown(q: query.ListParams, default_excluded: Sequence[str]) -> frozenset[str]:
    """Top-level attributes that neither the response nor the filter look at: not worth building."""
    if q.all_fields:
        return frozenset()
    removed = q.exclude_fields if q.exclude_fields is not None else default_excluded
    used = {t.path[0] for t in q.filter.terms} if q.filter else set()
    used |= {f.split("/")[0] for f in q.fields or ()}
    return frozenset(n for n in removed if "/" not in n and n not in used)


def conditions_of(flt: query.Filter | None) -> list[Condition]:
    """The filter's terms on top-level attributes (the only ones a column can hold)."""
    if flt is None:
        return []
    return [Condition(t.path[0], t.op, t.values) for t in flt.terms if len(t.path) == 1]


@dataclass
class Page:
    items: list[dict[str, Any]]
    next_after: str | None  # the id to continue after, None on the last page


def build_page(source: ListSource[E], q: query.ListParams, default_excluded: Sequence[str],
               page_size: int, after: str | None) -> Page:
    """One page: chunks from the database, each row checked against the whole filter."""
    conds = conditions_of(q.filter)
    chunk = page_size + 1 if page_size > 0 else UNPAGED_CHUNK
    budget = SCAN_PAGES * page_size if page_size > 0 else 0
    omit = not_shown(q, default_excluded)
    lean, fetch_lean = source.lean, source.fetch_lean
    to_doc: Callable[[E], dict[str, Any]] = source.doc
    fetch = source.fetch
    if lean and omit:
        to_doc = lambda e: lean(e, omit)  # noqa: E731
        if fetch_lean:
            fetch = lambda c, a, n: fetch_lean(c, a, n, omit)  # noqa: E731
    items: list[dict[str, Any]] = []
    cursor, scanned, first = after, 0, True
    while True:
        try:
            rows = fetch(conds, cursor, chunk)
        except NotFound:
            if first:
                raise BadRequest("nextpage_opaque_marker is not valid any more (the item it follows is "
                                 "gone); list again from the start") from None
            return Page(items, cursor)  # the row to continue after went away meanwhile
        first = False
        for entity in rows:
            doc = to_doc(entity)
            if q.matches(doc):
                if 0 < page_size == len(items):
                    return Page(items, cursor)
                items.append(q.select(doc, default_excluded, owned=True))  # doc is this page's own
            cursor = source.ident(entity)
            scanned += 1
        if len(rows) < chunk:
            return Page(items, None)
        if budget and scanned >= budget:
            return Page(items, cursor)


def _mark(item_id: str) -> str:
    return base64.urlsafe_b64encode(item_id.encode()).decode().rstrip("=")


def _unmark(marker: str) -> str:
    try:
        return base64.urlsafe_b64decode(marker + "=" * (-len(marker) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("nextpage_opaque_marker is not a marker this server gave") from None


async def listing(request: Request, source: ListSource[E], default_excluded: Sequence[str], *,
                  attributes: Collection[str], resource: str, page_size: int) -> Response:
    """A list response: `filter` and attribute selectors over the resource's `attributes` (another
    name is a 400), paged by `page_size` with a `Link: <...>; rel="next"` header that carries the
    query and an opaque marker (the id to continue after)."""
    q = query.parse_list_params(request.query_params)
    q.check_attributes(attributes, resource)
    after = _unmark(q.nextpage_opaque_marker) if q.nextpage_opaque_marker else None

    def build() -> tuple[Response, str | None]:
        page = build_page(source, q, default_excluded, page_size, after)
        return JSONResponse(page.items), page.next_after  # rendered here, in the thread

    resp, nxt = await run_in_threadpool(build)
    if nxt is not None:
        url = request.url.include_query_params(nextpage_opaque_marker=_mark(nxt))
        resp.headers["Link"] = f'<{url}>; rel="next"'
    return resp
