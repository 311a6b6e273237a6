"""The API's lists of occurrences leave the engine's plan and progress log undecoded (issue 24
item 4): what they render is the same as from the whole row (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork
from vnfm.domain.model import OP_OCC_ENGINE_PRIVATE, OpState
from vnfm.entrypoints.api import query
from vnfm.service import views, views_v2

Uow = Callable[[], SqlAlchemyUnitOfWork]


def test_lists_without_plan_and_log_render_the_same(uow: Uow) -> None:
    occ = f.op_occ(operation_state=OpState.PROCESSING, plan={"done": ["a"], "vnfcs": [{"id": "v"}]},
                   events=[{"time": "t", "stage": "s", "message": f"line {i}"} for i in range(50)],
                   error={"detail": "e"}, operation_params={"flavourId": "simple"})
    with uow() as u:
        u.op_occs.add(occ)
        u.commit()
    with uow() as u:
        whole = u.op_occs.page([], None, 10)
        lean = u.op_occs.page([], None, 10, frozenset({OP_OCC_ENGINE_PRIVATE}))
    assert [o.id for o in whole] == [o.id for o in lean] == [occ.id]
    assert whole[0].events and whole[0].plan  # the whole row has them ...
    assert lean[0].events == [] and lean[0].plan == {}  # ... the lean one was read without
    assert views.op_occ_info(lean[0]) == views.op_occ_info(whole[0])
    assert views_v2.op_occ_info(lean[0]) == views_v2.op_occ_info(whole[0])


def test_lists_without_default_excluded_attributes_render_the_same(uow: Uow) -> None:
    """A list that shows none of operationParams, error and the changes reads the rows without them
    (neither decoded nor unsealed); its items are what the whole row's document gives, selected."""
    occ = f.op_occ(operation_params={"additionalParams": {"master_node": {"password": "pw-1"}}})
    with uow() as u:
        u.op_occs.add(occ)
        u.commit()
    omit = frozenset(query.VNF_LCM_OP_OCC_DEFAULT_EXCLUDED)
    with uow() as u:
        whole = u.op_occs.page([], None, 10)
        lean = u.op_occs.page([], None, 10, omit | {OP_OCC_ENGINE_PRIVATE})
    assert whole[0].operation_params and whole[0].error and whole[0].resource_changes
    assert lean[0].operation_params == {} and lean[0].error is None and lean[0].resource_changes == {}
    assert lean[0].changed_info is None and lean[0].changed_ext_connectivity is None
    shown = query.ListParams().select(views.op_occ_info(whole[0]), query.VNF_LCM_OP_OCC_DEFAULT_EXCLUDED)
    assert views.op_occ_info(lean[0], omit) == shown
    assert list(views.op_occ_info(lean[0], omit)) == list(shown)  # the same attributes in the same order
