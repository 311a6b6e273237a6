"""Lists built in the database page by page (issue 17): a filter the database cannot evaluate reads
a bounded number of rows per request and still reaches every match through the Link chain, and a
list being built does not hold the event loop (a GET of one instance answers meanwhile)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from tests.api.conftest import Api
from vnfm.entrypoints.api import listing
from vnfm.service import views

INSTANCES = "/vnflcm/v1/vnf_instances"


async def _follow(api: Api, url: str | None, fetched: list[int]) -> tuple[list[str], list[int], list[int]]:
    """Follow the Link chain: ids, items per page, rows read from the database per request."""
    ids: list[str] = []
    sizes: list[int] = []
    reads: list[int] = []
    while url:
        fetched.clear()
        r = await api.c.get(url)
        assert r.status_code == 200, r.text
        reads.append(sum(fetched))
        ids += [d["id"] for d in r.json()]
        sizes.append(len(r.json()))
        link = r.headers.get("Link")
        url = link[link.index("<") + 1:link.index(">")] if link else None
    return ids, sizes, reads


async def test_a_filter_left_to_python_reads_bounded_pages(api_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    api = await api_factory(page_size=2)
    _, vnfd_id = await api.onboard()
    names = [f"{'hit' if i in (0, 25) else 'miss'}-{i}" for i in range(26)]
    ids = [await api.create_instance(vnfd_id, vnfInstanceName=n) for n in names]
    fetched: list[int] = []
    real = api.core.instances.page

    def counting(conds: Any, after: str | None, limit: int, *omit: Any) -> list[Any]:
        rows = real(conds, after, limit, *omit)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(api.core.instances, "page", counting)
    # cont is not translated to SQL: Python checks it on pages of rows, at most SCAN_PAGES pages a request
    got, sizes, reads = await _follow(api, INSTANCES + "?filter=(cont,vnfInstanceName,hit)", fetched)
    assert got == [ids[0], ids[25]]
    budget = listing.SCAN_PAGES * 2 + 3  # the budget, rounded up to whole chunks of page + 1
    assert max(reads) <= budget and sum(reads) >= 26
    assert sizes == [1, 0, 1]  # the middle request read its share, found nothing, and said where to go on
    # exact filters go to the database: it returns only the matches (plus nothing to look past)
    got, sizes, reads = await _follow(
        api, INSTANCES + f"?filter=(in,vnfInstanceName,miss-3,miss-7,miss-9);(eq,vnfdId,{vnfd_id})", fetched)
    assert got == [ids[3], ids[7], ids[9]] and sizes == [2, 1] and sum(reads) == 3 + 1


async def test_one_instance_answers_while_a_list_is_being_built(api_factory: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    api = await api_factory(page_size=0)
    _, vnfd_id = await api.onboard()
    ids = [await api.create_instance(vnfd_id) for _ in range(5)]
    listing_entered, shown = threading.Event(), threading.Event()
    held = {"first": True, "timed_out": False}
    real = views.instance_info

    def slow_in_the_list(inst: Any, *rest: Any) -> dict[str, Any]:
        if held["first"]:  # the list's first row: wait until the single GET has answered
            held["first"] = False
            listing_entered.set()
            held["timed_out"] = not shown.wait(timeout=30)  # a deadline, not a measurement
        return real(inst, *rest)

    monkeypatch.setattr(views, "instance_info", slow_in_the_list)
    big = asyncio.create_task(api.c.get(INSTANCES))
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, listing_entered.wait, 30)
    assert not big.done()
    one = await api.c.get(f"{INSTANCES}/{ids[2]}")  # answered while the list waits in its thread
    assert one.status_code == 200 and one.json()["id"] == ids[2]
    shown.set()
    r = await big
    assert not held["timed_out"]  # the list was still being built when the single GET answered
    assert r.status_code == 200 and [d["id"] for d in r.json()] == ids
