"""The repository of LCM operation occurrences: fenced writes, orphan claims, heartbeats and the
cheap checkpoint (`save_changes`: only what changed since the runner's last write)."""

from __future__ import annotations

import builtins
import functools
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, or_, select, update

from vnfm.adapters.db import bodypatch, mappers, tables
from vnfm.adapters.db.paging import Col
from vnfm.adapters.db.repository import TableRepository, Tx
from vnfm.domain.lcm import CANCELLABLE
from vnfm.domain.model import OP_OCC_ENGINE_PRIVATE, OpOcc, OpState, utcnow
from vnfm.service.ports import Sealer

ACTIVE_OP_STATES = (OpState.STARTING.value, OpState.PROCESSING.value, OpState.ROLLING_BACK.value)


class SqlOpOccRepository(TableRepository[OpOcc]):
    table = tables.vnf_lcm_op_occs
    label = "VNF LCM operation occurrence"
    columns = {"id": Col("id", ordered=True), "vnfInstanceId": Col("vnf_instance_id", ordered=True),
               "operation": Col("operation", ordered=True), "operationState": Col("operation_state", ordered=True),
               "startTime": Col("start_time", "time"), "stateEnteredTime": Col("state_entered_time", "time")}
    # not decoded (nor unsealed) for the API's lists that do not show them
    body_parts = {OP_OCC_ENGINE_PRIVATE: ("plan", "events"), "operationParams": ("operation_params",),
                  "error": ("error",), "resourceChanges": ("resource_changes",), "changedInfo": ("changed_info",),
                  "changedExtConnectivity": ("changed_ext_connectivity",)}

    def __init__(self, tx: Tx, box: Sealer | None = None) -> None:
        super().__init__(tx, mappers.sealing(mappers.op_occ_to_row, box),
                         mappers.unsealing(mappers.op_occ_from_row, box), order_by="start_time")
        self._box = box

    def for_instance(self, instance_id: str) -> builtins.list[OpOcc]:
        return self._select(self.table.c.vnf_instance_id == instance_id)

    def get_for_update(self, op_id: str) -> OpOcc | None:
        """`get` with `FOR UPDATE` on PostgreSQL (SQLite units of work hold the write lock anyway)."""
        stmt = select(self.table).where(self.table.c.id == op_id, *self._scope())
        if self.dialect == "postgresql":
            stmt = stmt.with_for_update()
        row = self._exec(stmt).mappings().first()
        return None if row is None else self._from_row(dict(row))

    def pending_cancel(self, op_id: str) -> str | None:
        """The mode of a cancel recorded for `op_id` (None: none), row locked on PostgreSQL: one
        column, no body decoded."""
        t = self.table
        stmt = select(t.c.cancel_mode).where(t.c.id == op_id)
        if self.dialect == "postgresql":
            stmt = stmt.with_for_update()
        return self._exec(stmt).scalar_one_or_none()

    def active(self) -> builtins.list[OpOcc]:
        """Occurrences in STARTING / PROCESSING / ROLLING_BACK."""
        return self._select(self.table.c.operation_state.in_(ACTIVE_OP_STATES))

    def _orphan_condition(self, stale_before: datetime, owner: str) -> ColumnElement[bool]:
        t = self.table
        return and_(
            t.c.operation_state.in_(ACTIVE_OP_STATES),
            or_(t.c.heartbeat.is_(None), t.c.heartbeat < mappers.as_utc(stale_before)),
            t.c.owner.is_distinct_from(owner),  # never the caller's own (it may be running them)
        )

    def abandoned(self, owner: str, stale_before: datetime) -> builtins.list[OpOcc]:
        """Active occurrences `owner` still owns whose heartbeat is older than `stale_before`:
        the caller decides which of them it no longer runs (claim_orphans never returns them)."""
        t = self.table
        return self._select(t.c.owner == owner, t.c.operation_state.in_(ACTIVE_OP_STATES),
                            or_(t.c.heartbeat.is_(None), t.c.heartbeat < mappers.as_utc(stale_before)))

    def claim_orphans(
        self, owner: str, stale_before: Any, now: datetime | None = None
    ) -> builtins.list[OpOcc]:
        """Take over active occurrences of other owners whose heartbeat is older than
        `stale_before` (or unset); the caller's own rows are never claimed.

        Each claimed occurrence gets `owner` and a fresh heartbeat (`now`), so it is no longer
        stale and no other process claims it. Returns them ordered by start_time.
        """
        if not isinstance(stale_before, datetime):
            raise TypeError("stale_before must be a datetime")
        t = self.table
        now = mappers.as_utc(now or utcnow())
        cond = self._orphan_condition(stale_before, owner)
        candidates = select(t.c.id).where(cond).order_by(*self._order)
        if self.dialect == "postgresql":
            candidates = candidates.with_for_update(skip_locked=True)
        claimed: builtins.list[str] = []
        for op_id in self._exec(candidates).scalars().all():
            res = self._exec(update(t).where(t.c.id == op_id, cond)
                             .values(owner=owner, heartbeat=now, epoch=t.c.epoch + 1))
            if res.rowcount == 1:
                epoch = self._exec(select(t.c.epoch).where(t.c.id == op_id)).scalar_one()
                self._patch_body(op_id, {"owner": owner, "heartbeat": mappers.iso(now), "epoch": epoch})
                claimed.append(op_id)
        if not claimed:
            return []
        return self._select(t.c.id.in_(claimed))

    def heartbeat(self, op_id: str, owner: str, now: datetime | None = None) -> bool:
        """Bump the heartbeat of an occurrence `owner` runs. False when it is not (any more) its owner."""
        t = self.table
        now = mappers.as_utc(now or utcnow())
        res = self._exec(update(t).where(t.c.id == op_id, t.c.owner == owner).values(heartbeat=now))
        return res.rowcount == 1  # the column only: the body's copy is not read back

    def save_owned(self, occ: OpOcc, owner: str | None, epoch: int) -> bool:
        """Write `occ` only if the row still has `owner` and `epoch` (the runner's fencing token)."""
        t = self.table
        row = self._to_row(occ)
        entity_id = row.pop("id")
        stmt = update(t).where(
            t.c.id == bindparam("_where_id"),
            t.c.owner.is_not_distinct_from(bindparam("_fence_owner", type_=t.c.owner.type)),
            t.c.epoch == bindparam("_fence_epoch", type_=t.c.epoch.type),
        )
        params = {"_where_id": entity_id, "_fence_owner": owner, "_fence_epoch": epoch, **row}
        return self._exec(stmt, params).rowcount == 1

    def save_changes(self, occ: OpOcc, since: OpOcc, owner: str | None, epoch: int) -> tuple[bool, str | None]:
        """`save_owned`, writing only what differs from `since` (the occurrence as the caller last
        wrote it with this owner and epoch): the changed columns and the changed keys of the JSON
        body, patched in SQL (progress lines appended when only new ones were added), only those
        keys sealed. While `occ` is cancellable and neither it nor `since` has a cancel pending,
        the row's cancel (recorded by the API meanwhile) is left as it is. Returns whether the row
        was written and its cancel mode after the write (one statement, no read before it)."""
        keys = [k for k in mappers.OCC_BODY if getattr(occ, k) != getattr(since, k)]
        keep_cancel = (occ.operation_state in CANCELLABLE and not occ.is_cancel_pending
                       and not since.is_cancel_pending)
        cancel_keys = ("is_cancel_pending", "cancel_mode")
        keys = [k for k in keys if k not in cancel_keys] + ([] if keep_cancel else list(cancel_keys))
        added: builtins.list[dict[str, Any]] = []
        n = len(since.events)
        if "events" in keys and len(occ.events) > n and occ.events[:n] == since.events:
            keys.remove("events")
            added = occ.events[n:]
        part = mappers.op_occ_to_dict(occ, keys, copied=False)  # serialised below, not kept
        if self._box is not None:
            part = self._box.seal(part, scope=occ.id)
        column = {"heartbeat": None if occ.heartbeat is None else mappers.as_utc(occ.heartbeat),
                  "operation_state": occ.operation_state.value,
                  "state_entered_time": mappers.as_utc(occ.state_entered_time),
                  "owner": occ.owner, "cancel_mode": occ.cancel_mode if occ.is_cancel_pending else None}
        columns = ("heartbeat", *(c for c in _CHANGING if c in keys), *(() if keep_cancel else ("cancel_mode",)))
        # Only the statement's own parameters: a column's name among them would be SET as well.
        params: dict[str, Any] = {"_id": occ.id, "_owner": owner, "_epoch": epoch,
                                  **{f"_c_{c}": column[c] for c in columns}}
        dialect = self.dialect
        params.update(bodypatch.patch_params(part, added, dialect))
        row = self._exec(_changes_statement(dialect, columns, tuple(part), len(added)), params).first()
        return (False, None) if row is None else (True, row[0])


_CHANGING = ("operation_state", "state_entered_time", "owner")  # columns a runner changes (and heartbeat)


@functools.lru_cache(maxsize=512)
def _changes_statement(dialect: str, columns: tuple[str, ...], keys: tuple[str, ...], added: int) -> Any:
    """The fenced UPDATE of `save_changes` for one shape of change (built once, then cached)."""
    t = tables.vnf_lcm_op_occs
    values: dict[str, Any] = {c: bindparam(f"_c_{c}", type_=t.c[c].type) for c in columns}
    if keys or added:
        values["body"] = bodypatch.patched(t.c.body, keys, added, dialect)
    return (update(t).where(t.c.id == bindparam("_id"),
                            t.c.owner.is_not_distinct_from(bindparam("_owner", type_=t.c.owner.type)),
                            t.c.epoch == bindparam("_epoch", type_=t.c.epoch.type))
            .values(**values).returning(t.c.cancel_mode))
