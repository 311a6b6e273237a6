"""The automatic heal's safety rules (domain/autoheal.py) and the health check's verdicts
(service/fm/health.py) with a stand-in cluster API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from vnfm.domain import autoheal as A
from vnfm.domain.autoheal import AutohealPolicy, Member

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LONG = NOW - timedelta(seconds=60)
P = AutohealPolicy(after=30, max_unhealthy_share=0.4, max_heals=2, window=3600)


def _m(vnfc: str, role: str, since: datetime | None = None) -> Member:
    return Member(vnfc, role, since)


def test_a_worker_unhealthy_long_enough_is_healed_not_before() -> None:
    members = [_m("m0", "master"), _m("w0", "worker", LONG), _m("w1", "worker"), _m("w2", "worker")]
    assert A.decide(members, NOW, P, busy=False, recent_heals=[]).heal == ["w0"]
    fresh = [*members[:1], _m("w0", "worker", NOW - timedelta(seconds=5)), *members[2:]]
    d = A.decide(fresh, NOW, P, busy=False, recent_heals=[])
    assert d.heal == [] and d.skipped == {"w0": A.NOT_YET}


def test_over_the_share_nothing_is_healed() -> None:
    members = [_m("m0", "master"), _m("w0", "worker", LONG), _m("w1", "worker", LONG), _m("w2", "worker")]
    d = A.decide(members, NOW, P, busy=False, recent_heals=[])  # 2 of 4 nodes = 50 % > 40 %
    assert d.heal == [] and d.skipped == {"w0": A.TOO_MANY, "w1": A.TOO_MANY}


@pytest.mark.parametrize(("down", "healed"), [(["m1"], ["m1"]), (["m1", "m2"], [])])
def test_a_master_only_while_etcd_keeps_quorum(down: list[str], healed: list[str]) -> None:
    members = [_m(f"m{i}", "master", LONG if f"m{i}" in down else None) for i in range(3)]
    members += [_m(f"w{i}", "worker") for i in range(4)]
    d = A.decide(members, NOW, AutohealPolicy(after=30, max_unhealthy_share=0.5), busy=False, recent_heals=[])
    assert d.heal == healed
    assert all(d.skipped[m] == A.QUORUM for m in down if m not in healed)


def test_a_single_master_is_never_healed_automatically() -> None:
    d = A.decide([_m("m0", "master", LONG), _m("w0", "worker"), _m("w1", "worker")], NOW, P, busy=False,
                 recent_heals=[])
    assert d.heal == [] and d.skipped == {"m0": A.QUORUM}


def test_busy_and_rate_limited() -> None:
    members = [_m("m0", "master"), _m("w0", "worker", LONG), *[_m(f"w{i}", "worker") for i in range(1, 5)]]
    assert A.decide(members, NOW, P, busy=True, recent_heals=[]).skipped == {"w0": A.BUSY}
    d = A.decide(members, NOW, P, busy=False, recent_heals=[NOW - timedelta(minutes=5)] * 2)
    assert d.skipped == {"w0": A.RATE}
    d = A.decide(members, NOW, P, busy=False, recent_heals=[NOW - timedelta(hours=2)] * 2)  # outside the window
    assert d.heal == ["w0"]


def test_enabled_only_when_true() -> None:
    assert A.enabled({"isAutohealEnabled": True})
    assert not A.enabled({}) and not A.enabled({"isAutohealEnabled": "true"})
