"""Follow a VNF LCM operation occurrence until it ends (the CLI's `--wait`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

DEFAULT_TIMEOUT = 1800.0
FIRST_DELAY = 0.05
MAX_DELAY = 1.0

SUCCESS = frozenset({"COMPLETED"})
# States at which a wait ends unsuccessfully. FAILED_TEMP is not final for the occurrence (it
# waits for retry / rollback / fail) but nothing more happens without the user: stop there.
FAILURE = frozenset({"FAILED_TEMP", "FAILED", "ROLLED_BACK"})


class OpReader(Protocol):
    """What waiting needs of a client (VnfmClient has it)."""

    def get_op(self, op_id: str) -> dict[str, Any]: ...


@dataclass
class WaitResult:
    op: dict[str, Any]
    state: str
    elapsed: float
    ok: bool
    history: list[tuple[str, float]] = field(default_factory=list)

    @property
    def error_detail(self) -> str:
        return describe_error(self.op)


class WaitTimeout(Exception):
    def __init__(self, op_id: str, state: str | None, elapsed: float) -> None:
        super().__init__(
            f"gave up waiting for vnfLcmOpOcc {op_id} after {elapsed:.1f}s "
            f"(last state {state or 'unknown'}); "
            f"it goes on in the server: follow it with `vnfm op show {op_id}`"
        )
        self.op_id = op_id
        self.state = state
        self.elapsed = elapsed


def describe_error(op: dict[str, Any]) -> str:
    """The occurrence's error ProblemDetails as one line ('' when it has none)."""
    err = op.get("error")
    if not isinstance(err, dict):
        return ""
    title = err.get("title") or ""
    detail = err.get("detail") or ""
    status = err.get("status")
    head = " ".join(str(p) for p in (status, title) if p)
    if head and detail:
        return f"{head}: {detail}"
    return str(head or detail)


def wait_for_op(
    client: OpReader,
    op_id: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    success: frozenset[str] = SUCCESS,
    failure: frozenset[str] = FAILURE,
    stale_entered_time: str | None = None,
    on_change: Callable[[str, float], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> WaitResult:
    """Poll the occurrence (backoff from 0.05 s, capped at 1 s) until it reaches a state in
    `success` or `failure`; call `on_change(state, elapsed)` on each new state.

    `stale_entered_time`: after retry/rollback the occurrence may still show its old FAILED_TEMP
    for a moment; an end state whose stateEnteredTime equals this value is not taken as the end.
    Raises WaitTimeout after `timeout` seconds.
    """
    start = clock()
    delay = FIRST_DELAY
    last: tuple[str, Any] | None = None
    history: list[tuple[str, float]] = []
    state: str | None = None
    while True:
        op = client.get_op(op_id)
        elapsed = clock() - start
        state = str(op.get("operationState", "UNKNOWN"))
        entered = op.get("stateEnteredTime")
        current = (state, entered)
        if current != last:
            last = current
            stale = stale_entered_time is not None and entered == stale_entered_time
            if not stale:
                history.append((state, elapsed))
                if on_change is not None:
                    on_change(state, elapsed)
                if state in success or state in failure:
                    return WaitResult(
                        op=op, state=state, elapsed=elapsed, ok=state in success, history=history
                    )
        if elapsed >= timeout:
            raise WaitTimeout(op_id, state, elapsed)
        sleep(min(delay, max(0.0, timeout - elapsed)))
        delay = min(delay * 2, MAX_DELAY)
