from __future__ import annotations

from typing import Any

import pytest

from vnfm.entrypoints.cli.client import op_id_from_location
from vnfm.entrypoints.cli.wait import WaitTimeout, describe_error, wait_for_op


class ScriptedClient:
    """get_op answers a scripted series of (state, enteredTime); the last one repeats."""

    def __init__(self, script: list[tuple[str, str]], error: dict[str, Any] | None = None) -> None:
        self.script = script
        self.calls = 0
        self.error = error

    def get_op(self, op_id: str) -> dict[str, Any]:
        state, entered = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        op: dict[str, Any] = {
            "id": op_id,
            "operation": "SCALE",
            "operationState": state,
            "stateEnteredTime": entered,
        }
        if state == "FAILED_TEMP" and self.error:
            op["error"] = self.error
        return op


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_follows_states_until_completed_with_backoff() -> None:
    script = [("STARTING", "t0")] * 2 + [("PROCESSING", "t1")] * 6 + [("COMPLETED", "t2")]
    client = ScriptedClient(script)
    clk = FakeClock()
    seen: list[tuple[str, float]] = []
    result = wait_for_op(
        client,
        "op-1",
        on_change=lambda s, t: seen.append((s, t)),
        sleep=clk.sleep,
        clock=clk.clock,
    )
    assert result.ok and result.state == "COMPLETED"
    assert [s for s, _ in seen] == ["STARTING", "PROCESSING", "COMPLETED"]
    assert seen[0][1] == 0.0 and seen[1][1] > 0
    # backoff: starts at 0.05, doubles, capped at 1 s
    assert clk.sleeps == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("end", ["FAILED_TEMP", "FAILED", "ROLLED_BACK"])
def test_stops_on_failure_states(end: str) -> None:
    err = {"status": 500, "title": "Internal Server Error", "detail": "server build failed"}
    client = ScriptedClient([("PROCESSING", "t1"), (end, "t2")], error=err)
    clk = FakeClock()
    result = wait_for_op(client, "op-1", sleep=clk.sleep, clock=clk.clock)
    assert not result.ok and result.state == end
    if end == "FAILED_TEMP":
        assert result.error_detail == "500 Internal Server Error: server build failed"


def test_deadline_raises_timeout() -> None:
    client = ScriptedClient([("PROCESSING", "t1")])
    clk = FakeClock()
    with pytest.raises(WaitTimeout) as exc:
        wait_for_op(client, "op-9", timeout=5.0, sleep=clk.sleep, clock=clk.clock)
    assert exc.value.state == "PROCESSING"
    assert 5.0 <= exc.value.elapsed < 6.5
    assert "vnfm op show op-9" in str(exc.value)


def test_stale_failed_temp_after_retry_is_not_the_end() -> None:
    # retry: the old FAILED_TEMP (entered t1) is still visible at first; a new FAILED_TEMP ends it
    client = ScriptedClient([("FAILED_TEMP", "t1"), ("PROCESSING", "t2"), ("COMPLETED", "t3")])
    clk = FakeClock()
    result = wait_for_op(client, "op-1", stale_entered_time="t1", sleep=clk.sleep, clock=clk.clock)
    assert result.ok
    assert [s for s, _ in result.history] == ["PROCESSING", "COMPLETED"]

    client = ScriptedClient([("FAILED_TEMP", "t1"), ("PROCESSING", "t2"), ("FAILED_TEMP", "t3")])
    result = wait_for_op(client, "op-1", stale_entered_time="t1", sleep=clk.sleep, clock=clk.clock)
    assert not result.ok and result.state == "FAILED_TEMP"


def test_custom_success_for_rollback() -> None:
    client = ScriptedClient([("ROLLING_BACK", "t1"), ("ROLLED_BACK", "t2")])
    clk = FakeClock()
    result = wait_for_op(
        client,
        "op-1",
        success=frozenset({"ROLLED_BACK"}),
        failure=frozenset({"FAILED_TEMP"}),
        sleep=clk.sleep,
        clock=clk.clock,
    )
    assert result.ok


def test_op_id_from_location() -> None:
    assert op_id_from_location("http://h:1/vnflcm/v1/vnf_lcm_op_occs/abc") == "abc"
    assert op_id_from_location("/vnflcm/v1/vnf_lcm_op_occs/abc/") == "abc"
    with pytest.raises(ValueError):
        op_id_from_location("http://h/vnflcm/v1/vnf_instances/x")


def test_describe_error() -> None:
    assert describe_error({}) == ""
    assert describe_error({"error": {"detail": "boom"}}) == "boom"


def test_new_progress_lines_after_the_last_seen_one() -> None:
    from vnfm.entrypoints.cli.wait import Observer, new_progress

    a, b, c = ({"time": f"t{i}", "stage": "s", "message": m} for i, m in enumerate("abc"))
    assert new_progress([a, b, c], None) == [a, b, c]
    assert new_progress([a, b, c], b) == [c]
    assert new_progress([a, b, c], c) == []
    assert new_progress([b, c], {"time": "gone"}) == [b, c]  # fell out of the window: all shown
    seen: list[str] = []
    obs = Observer(on_progress=lambda e, _t: seen.append(e["message"]), last_seen=a)
    obs.progress({"vnfmProgress": [a, b]}, 0.0)
    obs.progress({"vnfmProgress": [a, b, c]}, 0.1)
    obs.progress({"vnfmProgress": [a, b, c]}, 0.2)
    obs.progress({}, 0.3)
    assert seen == ["b", "c"]
