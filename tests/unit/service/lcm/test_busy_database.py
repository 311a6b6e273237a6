"""The engine waits out a busy database (issue 24): a load or checkpoint that met a bounded wait
(no pool connection in time, a lock timeout, SQLite's busy timeout) is made again, not turned into
a FAILED_TEMP of an operation that nothing failed (4,000 instantiates at once on one process:
5 ended FAILED_TEMP with "QueuePool limit of size 10 overflow 10 reached")."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import exc as sa_exc

from vnfm.domain.model import OpState
from vnfm.service.lcm.patience import Patience

from ..conftest import SEED_PARAMS, Harness


def _flaky(uow: Any, failures: int, error: Exception) -> Any:
    """`uow` whose first `failures` units of work fail with `error` (as a busy database would)."""
    left = [failures]

    def factory() -> Any:
        if left[0] > 0:
            left[0] -= 1
            raise error
        return uow()

    factory.left = left  # type: ignore[attr-defined]
    return factory


@pytest.mark.parametrize("error", [
    sa_exc.TimeoutError("QueuePool limit of size 10 overflow 10 reached, connection timed out, timeout 5.00"),
    sa_exc.OperationalError("UPDATE vnf_lcm_op_occs ...", {}, Exception("database is locked")),
])
async def test_a_busy_database_delays_the_engine_and_fails_nothing(h: Harness, error: Exception,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    app = h.app
    eng = app.engine
    # the orphan poll shares the engine's units of work: it would take some of the failures (it
    # logs and tries again at its next poll), leaving fewer for the paths under test
    monkeypatch.setattr(eng, "_claim_orphans", lambda stale_before: [])
    inst = app.instances.create({"vnfdId": h.vnfd_id})
    flaky = _flaky(eng.uow, 3, error)  # the load, then checkpoints, meet a busy database
    eng.uow = eng.store.uow = flaky
    occ = await h.wait(app.instances.instantiate(inst.id, {"flavourId": "simple", "additionalParams": SEED_PARAMS}))
    assert occ.operation_state == OpState.COMPLETED, occ.error
    assert flaky.left[0] == 0 and eng.store.patience.retried >= 3


async def test_other_errors_and_a_database_busy_for_too_long_still_fail_the_call() -> None:
    calls = [0]

    def broken() -> None:
        calls[0] += 1
        raise ValueError("not a busy database")

    p = Patience(busy=lambda exc: isinstance(exc, sa_exc.TimeoutError), within=0.3, first_delay=0.01)
    with pytest.raises(ValueError):
        await p.run(broken)
    assert calls[0] == 1  # not tried again

    def busy() -> None:
        calls[0] += 1
        raise sa_exc.TimeoutError("pool")

    with pytest.raises(sa_exc.TimeoutError):
        await p.run(busy)
    assert 3 <= calls[0] - 1 < 40  # tried again with backoff until the bound passed
