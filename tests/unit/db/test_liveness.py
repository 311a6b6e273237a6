"""The liveness path (`adapters/db/liveness.py`): one heartbeat statement for all of a process's
occurrences, the fencing read, and claims that never take the caller's own rows."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import event

from vnfm.adapters.db import tables
from vnfm.adapters.db.liveness import SqlLiveness, liveness_engine
from vnfm.domain.model import OpOcc, OpState

from . import factories as f
from .test_repositories import Uow, _body


@pytest.fixture
def live(db_url: str) -> Iterator[SqlLiveness]:
    lv = SqlLiveness(liveness_engine(db_url))
    try:
        yield lv
    finally:
        lv.close()


def _add(uow: Uow, *occs: OpOcc) -> None:
    with uow() as u:
        for o in occs:
            u.op_occs.add(o)
        u.commit()


def test_one_statement_beats_every_owned_occurrence(uow: Uow, live: SqlLiveness) -> None:
    mine = [f.op_occ(operation_state=OpState.PROCESSING, owner="me", heartbeat=f.T0) for _ in range(300)]
    taken = f.op_occ(operation_state=OpState.PROCESSING, owner="other", heartbeat=f.T0)
    _add(uow, *mine, taken)
    statements: list[str] = []
    event.listen(live.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    later = f.T0 + timedelta(seconds=10)
    beat = live.beat("me", [o.id for o in mine], later)
    assert beat.owned == {o.id for o in mine} and not beat.forceful and not beat.taken
    updates = [s for s in statements if s.lstrip().upper().startswith("UPDATE")]
    assert len(updates) == 1 and len(statements) <= 2  # PostgreSQL adds one read for skipped rows
    ended = f.op_occ(operation_state=OpState.COMPLETED, owner=None, heartbeat=f.T0)  # released by its runner
    _add(uow, ended)
    beat = live.beat("me", [o.id for o in mine] + [taken.id, ended.id, "gone"], later)
    assert beat.owned == {o.id for o in mine} and beat.taken == {taken.id}  # the ended one is not "lost"
    with uow() as u:
        assert all(u.op_occs.get(o.id).heartbeat == later for o in mine)
        assert u.op_occs.get(taken.id).heartbeat == f.T0  # another owner's: untouched
    assert _body(uow, tables.vnf_lcm_op_occs, mine[0].id)["heartbeat"] == f.T0.isoformat()  # never in the body


def test_the_beat_reports_forceful_cancels(uow: Uow, live: SqlLiveness) -> None:
    occ = f.op_occ(operation_state=OpState.PROCESSING, owner="me", heartbeat=f.T0)
    graceful = f.op_occ(operation_state=OpState.PROCESSING, owner="me", heartbeat=f.T0)
    _add(uow, occ, graceful)
    with uow() as u:  # the API records the cancels (any process)
        for o, mode in ((occ, "FORCEFUL"), (graceful, "GRACEFUL")):
            stored = u.op_occs.get_for_update(o.id)
            stored.is_cancel_pending, stored.cancel_mode = True, mode
            u.op_occs.save(stored)
        u.commit()
    beat = live.beat("me", [occ.id, graceful.id], f.T0)
    assert beat.owned == {occ.id, graceful.id} and beat.forceful == {occ.id}


def test_owns_is_the_fencing_token(uow: Uow, live: SqlLiveness) -> None:
    occ = f.op_occ(operation_state=OpState.PROCESSING, owner="me", heartbeat=f.T0)
    _add(uow, occ)
    assert live.owns(occ.id, "me", occ.epoch)
    assert not live.owns(occ.id, "me", occ.epoch + 1) and not live.owns(occ.id, "other", occ.epoch)
    assert not live.owns("missing", "me", 0)
    with uow() as u:
        (claimed,) = u.op_occs.claim_orphans("other", f.T0 + timedelta(seconds=1), now=f.T0)
        u.commit()
    assert not live.owns(occ.id, "me", occ.epoch) and live.owns(occ.id, "other", claimed.epoch)


def test_claim_orphans_never_takes_the_callers_own_rows(uow: Uow) -> None:
    mine = f.op_occ(operation_state=OpState.PROCESSING, owner="me", heartbeat=f.T0 - timedelta(seconds=60))
    theirs = f.op_occ(operation_state=OpState.PROCESSING, owner="dead", heartbeat=f.T0 - timedelta(seconds=60))
    _add(uow, mine, theirs)
    with uow() as u:
        claimed = u.op_occs.claim_orphans("me", f.T0 - timedelta(seconds=30), now=f.T0)
        abandoned = u.op_occs.abandoned("me", f.T0 - timedelta(seconds=30))
        u.commit()
    assert [o.id for o in claimed] == [theirs.id]
    assert [o.id for o in abandoned] == [mine.id] and abandoned[0].epoch == mine.epoch  # not bumped
