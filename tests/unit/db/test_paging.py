"""List pages in SQL (vnfm.adapters.db.paging), on SQLite and PostgreSQL: what the database returns
for a filter is a superset of what the API's filter matches (exactly that set where the terms are
translated exactly), and keyset pages walk the list in order without reading the whole table."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork
from vnfm.domain.errors import NotFound
from vnfm.domain.model import InstantiationState, LcmOperation, OpState
from vnfm.entrypoints.api.listing import conditions_of
from vnfm.entrypoints.api.query import parse_filter
from vnfm.service import views

Uow = Callable[[], SqlAlchemyUnitOfWork]
T = datetime(2024, 5, 1, 23, 59, 30, tzinfo=UTC)  # near a day boundary on purpose

NAMES = ["a", "b", "B", "é", "a,b", "x@y", "http://u:pw@h/x", None, "Z", "a"]
OPS = [LcmOperation.INSTANTIATE, LcmOperation.SCALE, LcmOperation.HEAL, LcmOperation.TERMINATE]
STATES = [OpState.COMPLETED, OpState.FAILED_TEMP, OpState.PROCESSING]


def _seed(uow: Uow) -> None:
    with uow() as u:
        for n, name in enumerate(NAMES):
            u.instances.add(f.instance(
                id=f"i{n:02d}", vnf_instance_name=name, vnfd_id=f"vnfd-{n % 3}", created_at=T + timedelta(seconds=n),
                instantiation_state=InstantiationState.INSTANTIATED if n % 2 else InstantiationState.NOT_INSTANTIATED))
        for n in range(24):
            start = T + timedelta(seconds=13 * n)
            u.op_occs.add(f.op_occ(id=f"o{n:02d}", instance_id=f"i{n % 5:02d}", operation=OPS[n % 4],
                                   operation_state=STATES[n % 3], start_time=start,
                                   state_entered_time=start + timedelta(seconds=7 * n)))
        u.commit()


INSTANCE_FILTERS = [
    ("(eq,vnfInstanceName,a)", True), ("(neq,vnfInstanceName,a)", True), ("(in,vnfInstanceName,B,é,Z)", True),
    ("(nin,vnfInstanceName,a,b)", True), ("(eq,vnfInstanceName,'a,b')", True),
    ("(eq,vnfInstanceName,http://u:pw@h/x)", False), ("(eq,vnfInstanceName,http://***@h/x)", False),
    ("(gt,vnfInstanceName,a)", False), ("(cont,vnfInstanceName,a)", False), ("(eq,id,i03)", True),
    ("(gt,id,i04);(lte,id,i08)", True), ("(eq,vnfdId,vnfd-1);(eq,instantiationState,INSTANTIATED)", True),
    ("(neq,instantiationState,INSTANTIATED)", True), ("(eq,metadata/m,1)", False),
    ("(eq,vnfdId,vnfd-1);(cont,vnfInstanceName,a)", False),
]
OCC_FILTERS = [  # (filter, translated exactly)
    ("(eq,operation,SCALE)", True), ("(in,operationState,COMPLETED,PROCESSING)", True),
    ("(neq,operationState,COMPLETED)", True), ("(gt,startTime,2024-05-02T00:01:00Z)", True),
    ("(gte,startTime,2024-05-02T00:01:00Z)", True), ("(lt,startTime,2024-05-02T00:00:00Z)", True),
    ("(lte,stateEnteredTime,2024-05-02T00:05:00Z)", True), ("(eq,startTime,2024-05-01T23:59:43Z)", True),
    ("(in,startTime,2024-05-01T23:59:30Z,2024-05-02T00:00:22Z)", True),
    ("(neq,startTime,2024-05-01T23:59:30Z)", True), ("(nin,startTime,2024-05-01T23:59:30Z,x)", False),
    ("(gt,startTime,2024)", False), ("(gt,startTime,2024-05-02)", False), ("(lt,stateEnteredTime,2024-05-02)", False),
    ("(gt,startTime,2024-05-02T00:01:00+00:00)", False), ("(lt,startTime,2024-05-02T00:01:00.5Z)", False),
    ("(eq,vnfInstanceId,i01);(neq,operation,HEAL)", True), ("(gt,vnfInstanceId,i02)", True),
]


@pytest.mark.parametrize(("expr", "exact"), INSTANCE_FILTERS)
def test_instance_pages_hold_every_match(uow: Uow, expr: str, exact: bool) -> None:
    _seed(uow)
    flt = parse_filter(expr)
    with uow() as u:
        every = u.instances.list()
        narrowed = u.instances.page(conditions_of(flt), None, 0)
    matches = [i.id for i in every if flt.matches(views.instance_info(i))]
    got = [i.id for i in narrowed]
    assert set(matches) <= set(got) and got == sorted(got)  # a superset, in list order
    if exact:
        assert got == matches  # translated exactly: the database did the filtering
    assert matches or expr.startswith("(eq,vnfInstanceName,http")  # the seed makes each filter bite


@pytest.mark.parametrize(("expr", "exact"), OCC_FILTERS)
def test_occurrence_pages_hold_every_match(uow: Uow, expr: str, exact: bool) -> None:
    _seed(uow)
    flt = parse_filter(expr)
    with uow() as u:
        every = u.op_occs.list()
        narrowed = u.op_occs.page(conditions_of(flt), None, 0)
    matches = [o.id for o in every if flt.matches(views.op_occ_info(o))]
    got = [o.id for o in narrowed]
    assert set(matches) <= set(got)
    if exact:
        assert got == matches
    assert 0 < len(matches) < len(every) or expr == "(gt,startTime,2024)"


def test_time_filters_are_narrowed_in_the_database(uow: Uow) -> None:
    _seed(uow)
    flt = parse_filter("(lte,startTime,2024-05-01)")
    with uow() as u:
        got = u.op_occs.page(conditions_of(flt), None, 0)
    assert [o.id for o in got] == ["o00", "o01", "o02"]  # widened to its day: 2024-05-01 (30 s left in it)


def test_keyset_pages_walk_the_list_in_order(uow: Uow) -> None:
    _seed(uow)
    seen: list[str] = []
    after: str | None = None
    with uow() as u:
        while True:
            page = u.op_occs.page([], after, 5)
            seen += [o.id for o in page]
            if len(page) < 5:
                break
            after = page[-1].id
        assert seen == [f"o{n:02d}" for n in range(24)]
        narrowed = u.instances.page(conditions_of(parse_filter("(eq,vnfdId,vnfd-0)")), "i03", 2)
        assert [i.id for i in narrowed] == ["i06", "i09"]
        with pytest.raises(NotFound):
            u.instances.page([], "gone", 2)


def test_subscription_pages_are_per_api(uow: Uow) -> None:
    with uow() as u:
        for n in range(4):
            u.subscriptions.add(f.subscription(id=f"s{n}", kind="vnflcm" if n % 2 else "vnfpkgm",
                                               created_at=T + timedelta(seconds=n)))
        u.commit()
    with uow() as u:
        assert [s.id for s in u.subscriptions.page_of_kind("vnflcm", [], None, 10)] == ["s1", "s3"]
        assert [s.id for s in u.subscriptions.page_of_kind("vnfpkgm", [], "s0", 10)] == ["s2"]


def test_a_page_can_leave_out_what_only_omitted_attributes_need(uow: Uow) -> None:
    with uow() as u:
        u.instances.add(f.instance(id="full"))
        u.commit()
    with uow() as u:
        whole = u.instances.page([], None, 5)[0]
        lean = u.instances.page([], None, 5, frozenset({"instantiatedVnfInfo", "metadata"}))[0]
    assert whole.resources.vnfcs and whole.metadata and whole.driver_state
    assert not lean.resources.vnfcs and not lean.metadata and not lean.driver_state
    assert (lean.vim_connection_info, lean.extensions, lean.vnf_instance_name, lean.instantiation_state) == (
        whole.vim_connection_info, whole.extensions, whole.vnf_instance_name, whole.instantiation_state)
    shown = frozenset({"instantiatedVnfInfo", "metadata"})
    assert views.instance_info(lean, shown) == views.instance_info(whole, shown)
