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
# The exit code of a `--wait` that gave up waiting (the operation goes on), as timeout(1)'s: scripts
# tell it from a failed operation (1) and a usage error (2).
EXIT_WAIT_TIMEOUT = 124


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


def progress_of(op: dict[str, Any]) -> list[dict[str, Any]]:
    """The occurrence's progress lines (vnfm's `vnfmProgress` extension, oldest first)."""
    events = op.get("vnfmProgress")
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


def new_progress(events: list[dict[str, Any]], last_seen: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The lines of `events` after `last_seen` (all of them when it is gone from the window)."""
    if last_seen is None:
        return list(events)
    for i in range(len(events) - 1, -1, -1):
        if events[i] == last_seen:
            return events[i + 1 :]
    return list(events)


@dataclass
class Observer:
    """What following an occurrence reports as it goes (every callback optional)."""

    on_change: Callable[[str, float], None] | None = None
    on_progress: Callable[[dict[str, Any], float], None] | None = None
    on_poll: Callable[[dict[str, Any], float], None] | None = None
    # the last progress line already known (lines up to it are not reported again)
    last_seen: dict[str, Any] | None = None

    def progress(self, op: dict[str, Any], elapsed: float) -> None:
        events = progress_of(op)
        fresh = new_progress(events, self.last_seen)
        if events:
            self.last_seen = events[-1]
        if self.on_progress is not None:
            for event in fresh:
                self.on_progress(event, elapsed)

    def change(self, state: str, elapsed: float) -> None:
        if self.on_change is not None:
            self.on_change(state, elapsed)


def wait_for_op(
    client: OpReader,
    op_id: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    success: frozenset[str] = SUCCESS,
    failure: frozenset[str] = FAILURE,
    stale_entered_time: str | None = None,
    on_change: Callable[[str, float], None] | None = None,
    observer: Observer | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> WaitResult:
    """Poll the occurrence (backoff from 0.05 s, capped at 1 s) until it reaches a state in
    `success` or `failure`; call `on_change(state, elapsed)` on each new state, and the
    `observer`'s callbacks on each new state, each new progress line and each poll.

    `stale_entered_time`: after retry/rollback the occurrence may still show its old FAILED_TEMP
    for a moment; an end state whose stateEnteredTime equals this value is not taken as the end.
    Raises WaitTimeout after `timeout` seconds.
    """
    obs = observer or Observer()
    if on_change is not None:
        obs.on_change = on_change
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
        stale = stale_entered_time is not None and entered == stale_entered_time
        ended = not stale and (state in success or state in failure)
        if not ended:  # a new state first, then the lines logged in it
            _note_state(obs, history, current != last and not stale, state, elapsed)
        if not stale:
            obs.progress(op, elapsed)
        if ended:  # the last lines first, then the end state
            _note_state(obs, history, True, state, elapsed)
            return WaitResult(op=op, state=state, elapsed=elapsed, ok=state in success, history=history)
        last = current
        if obs.on_poll is not None:
            obs.on_poll(op, elapsed)
        if elapsed >= timeout:
            raise WaitTimeout(op_id, state, elapsed)
        sleep(min(delay, max(0.0, timeout - elapsed)))
        delay = min(delay * 2, MAX_DELAY)


def _note_state(obs: Observer, history: list[tuple[str, float]], new: bool, state: str, elapsed: float) -> None:
    if new:
        history.append((state, elapsed))
        obs.change(state, elapsed)
