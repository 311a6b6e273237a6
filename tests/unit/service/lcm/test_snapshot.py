"""`job.snapshot`: the copy each write of a job is made from is as deep as `copy.deepcopy`'s, but
for the progress log's lines (appended, never changed: shared) and the containers equal to those
of an earlier snapshot (shared with it: snapshots are never changed)."""

from __future__ import annotations

import copy

from vnfm.domain.model import LcmOperation, OpOcc, OpState, VnfInstance, utcnow
from vnfm.service.lcm.job import snapshot


def _occ() -> OpOcc:
    occ = OpOcc(vnf_instance_id="i-1", operation=LcmOperation.INSTANTIATE,
                operation_params={"flavourId": "simple", "additionalParams": {"k": [1, {"a": "b"}]}})
    occ.operation_state = OpState.PROCESSING
    occ.plan = {"done": ["a"], "vnfcs": [{"id": "v1"}]}
    occ.events = [{"time": "t", "stage": "s", "message": f"m{i}"} for i in range(3)]
    occ.heartbeat = utcnow()
    occ.error = {"detail": "x"}
    occ.warnings = ["w"]
    return occ


def test_snapshot_equals_deepcopy_and_shares_no_container() -> None:
    for original in (_occ(), VnfInstance(vnfd_id="d", vnf_pkg_id="p", additional_params={"x": {"y": [1]}})):
        copied = snapshot(original)
        assert copied == copy.deepcopy(original) == original
        assert copied is not original
        for name, value in vars(original).items():
            if isinstance(value, dict | list):
                assert getattr(copied, name) is not value, name


def test_changes_to_either_side_stay_there() -> None:
    occ = _occ()
    copied = snapshot(occ)
    occ.events.append({"time": "t", "stage": "s", "message": "later"})
    occ.plan["done"].append("b")
    occ.operation_params["additionalParams"]["k"][1]["a"] = "changed"
    occ.operation_state = OpState.COMPLETED
    assert len(copied.events) == 3 and copied.plan["done"] == ["a"]
    assert copied.operation_params["additionalParams"]["k"][1]["a"] == "b"
    assert copied.operation_state == OpState.PROCESSING
    del occ.events[:2]  # as the log is trimmed to its newest lines
    assert [e["message"] for e in copied.events] == ["m0", "m1", "m2"]


def test_shared_references_stay_shared_as_deepcopy_keeps_them() -> None:
    occ = _occ()
    shared = {"same": 1}
    occ.plan["a"] = shared
    occ.plan["b"] = shared
    copied = snapshot(occ)
    assert copied.plan["a"] is copied.plan["b"] and copied.plan["a"] is not shared


def test_the_progress_lines_are_shared_the_list_is_not() -> None:
    occ = _occ()
    copied = snapshot(occ)
    assert copied.events is not occ.events and all(a is b for a, b in zip(copied.events, occ.events, strict=True))


def test_containers_equal_to_an_earlier_snapshots_are_shared_with_it_changed_ones_copied() -> None:
    occ = _occ()
    first = snapshot(occ)
    occ.plan["done"].append("b")
    second = snapshot(occ, first)
    assert second.operation_params is first.operation_params and second.error is first.error
    assert second.plan is not first.plan and second.plan is not occ.plan and second.plan["done"] == ["a", "b"]
    assert first.plan["done"] == ["a"]
    occ.operation_params["additionalParams"]["k"].append(2)  # the live object changes on
    assert second.operation_params == first.operation_params == _occ().operation_params
    assert snapshot(occ, second) == copy.deepcopy(occ)
