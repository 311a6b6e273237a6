"""What an operator can do about an occurrence that stopped, the likeliest first: the one rule the
CLI's `--wait` epilogue and the web console both show (SOL003 5.4.15: rollback exists for
instantiate and scale-out as vnfm implements it; a request the VNFM refused is not worth a retry)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ROLLBACK_OPERATIONS = frozenset({"INSTANTIATE", "SCALE"})


@dataclass(frozen=True)
class Remedy:
    action: str  # "retry", "rollback", "fail" (the occurrence's task), or "" for advice only
    why: str
    suggested: bool = False


def remedies(op: dict[str, Any]) -> list[Remedy]:
    """The remedies for `op` (a VnfLcmOpOcc as the API shows it), the suggested one first."""
    state = op.get("operationState")
    operation = str(op.get("operation", ""))
    if state == "ROLLED_BACK":
        return [Remedy("", f"the {operation} was undone; correct the cause and send the request again")]
    if state == "FAILED":
        return [Remedy("", f"the {operation} is given up and the instance unlocked as it is")]
    if state != "FAILED_TEMP":
        return []
    can_roll_back = operation in ROLLBACK_OPERATIONS and (
        operation != "SCALE" or (op.get("operationParams") or {}).get("type") != "SCALE_IN"
    )
    err = op.get("error") if isinstance(op.get("error"), dict) else {}
    status = err.get("status") if isinstance(err, dict) else None
    refused = isinstance(status, int) and 400 <= status < 500
    retry = Remedy("retry", "resume from the failed stage once its cause is fixed"
                   + (" (the request cannot change: a retry repeats it)" if refused else ""))
    rollback = Remedy("rollback", "undo what this operation created")
    fail = Remedy("fail", "give up: ends FAILED, the instance is unlocked as it is")
    steps = [retry]
    if can_roll_back:
        steps = [rollback, retry] if refused else [retry, rollback]
    steps.append(fail)
    first = steps[0]
    return [Remedy(first.action, first.why, True), *steps[1:]]
