"""The SOL003 LCM state machine: which operation may start from which instance state, and how an
operation occurrence moves between STARTING, PROCESSING, COMPLETED, FAILED_TEMP, FAILED,
ROLLING_BACK and ROLLED_BACK.
"""

from __future__ import annotations

from typing import Any

from vnfm.domain.errors import Conflict
from vnfm.domain.model import (
    InstantiationState,
    LcmOperation,
    OpOcc,
    OpState,
    VnfInstance,
    utcnow,
)

# Allowed occurrence transitions (SOL003 v2.6.1 clause 5.6.2, figure "states of a VNF LCM operation").
TRANSITIONS: dict[OpState, frozenset[OpState]] = {
    OpState.STARTING: frozenset({OpState.PROCESSING, OpState.ROLLED_BACK, OpState.FAILED_TEMP}),
    OpState.PROCESSING: frozenset({OpState.COMPLETED, OpState.FAILED_TEMP}),
    OpState.FAILED_TEMP: frozenset({OpState.PROCESSING, OpState.ROLLING_BACK, OpState.FAILED}),
    OpState.ROLLING_BACK: frozenset({OpState.ROLLED_BACK, OpState.FAILED_TEMP}),
    OpState.COMPLETED: frozenset(),
    OpState.FAILED: frozenset(),
    OpState.ROLLED_BACK: frozenset(),
}

# Operations that need the instance INSTANTIATED; INSTANTIATE needs NOT_INSTANTIATED.
NEEDS_INSTANTIATED = frozenset(
    {
        LcmOperation.SCALE,
        LcmOperation.SCALE_TO_LEVEL,
        LcmOperation.CHANGE_FLAVOUR,
        LcmOperation.TERMINATE,
        LcmOperation.HEAL,
        LcmOperation.OPERATE,
        LcmOperation.CHANGE_EXT_CONN,
        LcmOperation.CHANGE_VNFPKG,
    }
)

# Operations that can be rolled back (SOL003: rollback undoes instantiate, scale-out, change_vnfpkg).
ROLLBACK_SUPPORTED = frozenset({LcmOperation.INSTANTIATE, LcmOperation.SCALE, LcmOperation.CHANGE_VNFPKG})


def check_can_start(instance: VnfInstance, operation: LcmOperation) -> None:
    """Raise Conflict (409) when `operation` may not start on `instance` now."""
    if instance.lock_op_id is not None:
        raise Conflict(
            f"VNF instance {instance.id} has an operation in progress or awaiting resolution "
            f"(vnfLcmOpOcc {instance.lock_op_id}); wait for it, or retry, roll back or fail it first"
        )
    state = instance.instantiation_state
    if operation == LcmOperation.INSTANTIATE and state != InstantiationState.NOT_INSTANTIATED:
        raise Conflict(f"VNF instance {instance.id} is already INSTANTIATED")
    if operation in NEEDS_INSTANTIATED and state != InstantiationState.INSTANTIATED:
        raise Conflict(f"VNF instance {instance.id} is NOT_INSTANTIATED: {operation.value} needs INSTANTIATED")


def check_can_delete(instance: VnfInstance) -> None:
    if instance.instantiation_state != InstantiationState.NOT_INSTANTIATED:
        raise Conflict(f"VNF instance {instance.id} is INSTANTIATED: terminate it before deleting")
    if instance.lock_op_id is not None:
        raise Conflict(f"VNF instance {instance.id} has an operation in progress ({instance.lock_op_id})")


def transition(occ: OpOcc, new: OpState, *, error: dict[str, Any] | None = None) -> None:
    """Move `occ` to `new`, or raise Conflict naming the states when that is not allowed."""
    old = occ.operation_state
    if new not in TRANSITIONS[old]:
        raise Conflict(f"vnfLcmOpOcc {occ.id} is {old.value}; it cannot go to {new.value}")
    occ.operation_state = new
    occ.state_entered_time = utcnow()
    if old == OpState.FAILED_TEMP and new == OpState.PROCESSING and rollback_began(occ):
        # a retry after a partial rollback: that rollback may have undone forward stages, so the
        # retry runs every forward stage again (each is idempotent: check, then act) rather than
        # going on after the last one done; and a later rollback starts over for the same reason
        occ.plan["rb_done"] = []
        occ.plan["done"] = []
    if new not in CANCELLABLE:  # a cancellation ends with the state it was pending in
        occ.is_cancel_pending = False
        occ.cancel_mode = None
    if new == OpState.FAILED_TEMP:
        occ.error = error
    elif new in (OpState.PROCESSING, OpState.ROLLING_BACK, OpState.COMPLETED):
        occ.error = None


def rollback_began(occ: OpOcc) -> bool:
    """Whether a rollback of `occ` may have undone something: a rollback stage completed, or one
    started (`plan["current"]`) and failed or was killed inside its first stage (a hook that died
    part-way, or after its work with the stage not yet recorded done)."""
    return bool(occ.plan.get("rb_done")) or str(occ.plan.get("current", "")).startswith("rollback:")


CANCELLABLE = frozenset({OpState.PROCESSING, OpState.ROLLING_BACK})


def check_can_cancel(occ: OpOcc) -> None:
    """SOL003 5.4.17: only a PROCESSING or ROLLING_BACK occurrence can be cancelled, once."""
    if occ.operation_state not in CANCELLABLE:
        raise Conflict(f"vnfLcmOpOcc {occ.id} is {occ.operation_state.value}; cancel needs PROCESSING or "
                       "ROLLING_BACK")
    if occ.is_cancel_pending:
        raise Conflict(f"vnfLcmOpOcc {occ.id} is already being cancelled ({occ.cancel_mode})")


def check_task(occ: OpOcc, task: str) -> None:
    """Preconditions of the retry / rollback / fail tasks (SOL003 5.4.14-5.4.16)."""
    if occ.operation_state != OpState.FAILED_TEMP:
        raise Conflict(
            f"vnfLcmOpOcc {occ.id} is {occ.operation_state.value}; {task} needs FAILED_TEMP"
        )
    if task == "rollback" and occ.operation not in ROLLBACK_SUPPORTED:
        raise Conflict(f"rollback is not supported for {occ.operation.value} operations; use retry or fail")
    if (task == "rollback" and occ.operation == LcmOperation.SCALE and occ.operation_params.get("type") == "SCALE_IN"
            and {"scale_start", "infra_update"} & set(occ.plan.get("done", []))):
        raise Conflict("rollback of this SCALE_IN is not possible: its nodes or VNFCs were already removed "
                       "and cannot be restored; retry or fail")
