"""The etcd quorum rules of control-plane scale and heal (domain/etcd_quorum.py)."""

import pytest

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.etcd_quorum import check_add, check_heal, quorum, removal_order, tolerated

M5 = ["m1", "m2", "m3", "m4", "m5"]


def test_quorum_and_tolerance():
    assert [quorum(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]
    assert [tolerated(n) for n in (0, 1, 2, 3, 4, 5)] == [0, 0, 0, 1, 1, 2]


def test_scale_in_5_to_3_all_healthy():
    assert removal_order(M5, set(), ["m4", "m5"]) == ["m4", "m5"]


def test_unhealthy_members_leave_first():
    assert removal_order(M5, {"m5"}, ["m4", "m5"]) == ["m5", "m4"]


def test_scale_in_refused_when_an_unhealthy_member_stays():
    # 5 -> 3 with m1 and m2 unhealthy and staying: after m4 leaves, 2 healthy of 4 < quorum 3
    with pytest.raises(UnprocessableEntity, match=r"removing etcd member m4 .* 4 members would remain, 2 of them "
                       r"healthy, quorum is 3 \(unhealthy: m1, m2; heal them first\)"):
        removal_order(M5, {"m1", "m2"}, ["m4", "m5"])


def test_removing_all_refused():
    with pytest.raises(UnprocessableEntity, match="would leave none"):
        removal_order(["m1"], set(), ["m1"])


def test_add_with_learners():
    check_add(["m1"], set(), 2)  # 1 -> 3
    check_add(["m1", "m2", "m3"], {"m3"}, 2)  # 3 -> 5 with one member down: 4 healthy of 5 after both
    with pytest.raises(UnprocessableEntity, match="no quorum now: 1 of 3"):
        check_add(["m1", "m2", "m3"], {"m2", "m3"}, 2)
    check_add(["m1", "m2", "m3", "m4", "m5"], {"m4", "m5"}, 1)  # 3 of 5 healthy: a quorum, the learner adds one


def test_heal():
    check_heal(["m1", "m2", "m3"], set(), ["m1"])
    with pytest.raises(UnprocessableEntity, match="1 healthy of 3"):
        check_heal(["m1", "m2", "m3"], {"m2"}, ["m1"])
