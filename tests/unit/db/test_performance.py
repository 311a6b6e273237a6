"""Performance sanity: 10,000 instances, then get(id) stays fast (timings printed, not asserted)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

from tests.unit.db import factories as f
from vnfm.adapters.db import SqlAlchemyUnitOfWork
from vnfm.domain.model import VnfInstance

Uow = Callable[[], SqlAlchemyUnitOfWork]
COUNT = 10_000


@pytest.mark.slow
def test_get_stays_fast_with_10k_instances(uow: Uow, backend: str) -> None:
    template = f.instance()
    ids = []
    t0 = time.perf_counter()
    with uow() as u:
        for i in range(COUNT):
            inst = VnfInstance(vnfd_id=template.vnfd_id, vnf_pkg_id="pkg", vnf_instance_name=f"vnf-{i}",
                               resources=template.resources, metadata={"i": i})
            u.instances.add(inst)
            ids.append(inst.id)
        u.commit()
    insert_s = time.perf_counter() - t0

    sample = random.Random(1).sample(ids, 500)
    t0 = time.perf_counter()
    with uow() as u:
        for inst_id in sample:
            got = u.instances.get(inst_id)
            assert got is not None and got.id == inst_id
    get_ms = (time.perf_counter() - t0) / len(sample) * 1000

    t0 = time.perf_counter()
    with uow() as u:
        got = u.instances.get(ids[-1])
        assert got is not None and got.metadata == {"i": COUNT - 1}
    fresh_uow_ms = (time.perf_counter() - t0) * 1000

    t0 = time.perf_counter()
    with uow() as u:
        assert len(u.instances.list()) == COUNT
    list_s = time.perf_counter() - t0
    print(f"\n[{backend}] insert {COUNT}: {insert_s:.2f}s; get(id): {get_ms:.3f} ms avg over {len(sample)}; "
          f"get in a fresh uow: {fresh_uow_ms:.2f} ms; list(): {list_s:.2f}s")
