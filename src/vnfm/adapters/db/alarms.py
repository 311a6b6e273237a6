"""Fault management in the database (migration 0008): the alarm repository and the watch leases.

Watch leases decide which process watches the health of which instance: one row per instance
(`owner`, `expires_at`), taken by a conditional UPDATE (`WHERE owner = me OR expires_at < now`)
checked by the rows it returns, so exactly one process holds a given instance however many
try at once; a holder that dies stops renewing and its rows are taken once they expire. Rows
whose id starts with "@" are the watchers themselves (one per live process), so each can take a
fair share (the instances / the live watchers) and give back what is over it.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from vnfm.adapters.db import tables
from vnfm.adapters.db.mappers import as_utc, iso, parse_dt
from vnfm.adapters.db.paging import Col
from vnfm.adapters.db.repository import TableRepository, Tx
from vnfm.domain.alarms import AckState, Alarm, EventType, PerceivedSeverity

WATCHER = "@"  # prefix of a watcher's own presence row
SHARED = "#"  # prefix of a lease on a fleet-wide chore (e.g. "#housekeeping"): one process does it


def alarm_to_row(a: Alarm) -> dict[str, Any]:
    body = {
        "id": a.id, "managed_object_id": a.managed_object_id, "vnfc_id": a.vnfc_id,
        "probable_cause": a.probable_cause, "perceived_severity": a.perceived_severity.value,
        "event_type": a.event_type.value, "fault_type": a.fault_type, "fault_details": list(a.fault_details),
        "faulty_resource": a.faulty_resource, "alarm_raised_time": iso(a.alarm_raised_time),
        "alarm_changed_time": iso(a.alarm_changed_time), "alarm_cleared_time": iso(a.alarm_cleared_time),
        "event_time": iso(a.event_time), "ack_state": a.ack_state.value,
    }
    return {"id": a.id, "managed_object_id": a.managed_object_id, "vnfc_id": a.vnfc_id,
            # the value the API shows (CLEARED once cleared), so a filter narrows in SQL exactly
            "perceived_severity": "CLEARED" if a.cleared else a.perceived_severity.value,
            "event_type": a.event_type.value, "probable_cause": a.probable_cause, "ack_state": a.ack_state.value,
            "cleared": a.cleared,
            "alarm_raised_time": as_utc(a.alarm_raised_time), "body": body}


def alarm_from_row(row: Mapping[str, Any]) -> Alarm:
    b = row["body"]
    return Alarm(
        managed_object_id=b["managed_object_id"], vnfc_id=b["vnfc_id"], probable_cause=b["probable_cause"],
        perceived_severity=PerceivedSeverity(b["perceived_severity"]), event_type=EventType(b["event_type"]),
        fault_type=b.get("fault_type"), fault_details=list(b.get("fault_details") or []),
        faulty_resource=b.get("faulty_resource"), id=b["id"],
        alarm_raised_time=parse_dt(b["alarm_raised_time"]) or as_utc(row["alarm_raised_time"]),
        alarm_changed_time=parse_dt(b.get("alarm_changed_time")),
        alarm_cleared_time=parse_dt(b.get("alarm_cleared_time")),
        event_time=parse_dt(b.get("event_time")) or as_utc(row["alarm_raised_time"]),
        ack_state=AckState(b["ack_state"]),
    )


class SqlAlarmRepository(TableRepository[Alarm]):
    table = tables.alarms
    label = "alarm"
    columns = {"id": Col("id", ordered=True), "managedObjectId": Col("managed_object_id"),
               "perceivedSeverity": Col("perceived_severity", ordered=True),
               "eventType": Col("event_type", ordered=True), "probableCause": Col("probable_cause"),
               "ackState": Col("ack_state", ordered=True), "alarmRaisedTime": Col("alarm_raised_time", kind="time")}

    def __init__(self, tx: Tx) -> None:
        super().__init__(tx, alarm_to_row, alarm_from_row, order_by="alarm_raised_time")

    def open_for(self, instance_ids: Sequence[str]) -> builtins.list[Alarm]:
        """The alarms not cleared of these instances (one indexed query)."""
        t = self.table
        return self._select(t.c.managed_object_id.in_(list(instance_ids)), t.c.cleared.is_(False)) if instance_ids \
            else []

    def open_outside(self, instance_ids: Sequence[str]) -> builtins.list[Alarm]:
        """The alarms not cleared of instances other than these (they were terminated or deleted)."""
        t = self.table
        return self._select(t.c.cleared.is_(False), t.c.managed_object_id.not_in(list(instance_ids)))


class SqlWatchLeases:
    """vnfm.service.ports.WatchLeases over `watch_leases`."""

    table = tables.watch_leases

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    def _exec(self, stmt: Any, params: Any = None) -> Any:
        return self.tx.conn().execute(stmt, params)

    def acquire(self, owner: str, instance_ids: Sequence[str], now: datetime, ttl: float) -> builtins.list[str]:
        """Take or renew the leases of `instance_ids` free, expired or already `owner`'s, at most a
        fair share; returns those `owner` holds now. Announces `owner` as a live watcher."""
        t = self.table
        now = as_utc(now)
        until = now + timedelta(seconds=ttl)
        self._ensure([WATCHER + owner, *instance_ids], owner, now)
        self._exec(update(t).where(t.c.instance_id == WATCHER + owner).values(owner=owner, expires_at=until))
        watchers = int(self._exec(select(func.count()).where(t.c.instance_id.startswith(WATCHER),
                                                              t.c.expires_at >= now)).scalar_one())
        share = math.ceil(len(instance_ids) / max(1, watchers))
        held = set(self._exec(select(t.c.instance_id).where(t.c.owner == owner, t.c.expires_at >= now,
                                                            t.c.instance_id.in_(list(instance_ids)))).scalars())
        over = sorted(held)[share:]
        if over:  # more than a fair share: give the rest back for the others to take
            self.release(owner, over)
            held -= set(over)
        room = share - len(held)
        cond = or_(t.c.owner == owner, t.c.expires_at < now)
        free: builtins.list[str] = []
        for chunk in _chunks(list(instance_ids), len(instance_ids)):
            if len(free) < room:
                free += self._exec(select(t.c.instance_id).where(t.c.instance_id.in_(chunk), t.c.expires_at < now)
                                   .order_by(t.c.instance_id).limit(room - len(free))).scalars()
        taken: set[str] = set()
        for chunk in _chunks(free, len(free)):  # conditional: a row another process took meanwhile stays its
            rows = self._exec(update(t).where(t.c.instance_id.in_(chunk), cond)
                              .values(owner=owner, expires_at=until).returning(t.c.instance_id)).scalars()
            taken |= set(rows)
        renew = sorted(held)
        for chunk in _chunks(renew, len(renew)):
            self._exec(update(t).where(t.c.instance_id.in_(chunk), t.c.owner == owner).values(expires_at=until))
        return sorted(held | taken)

    def _ensure(self, ids: Sequence[str], owner: str, now: datetime) -> None:
        """A row for every id (a new one expired: free to take)."""
        t = self.table
        have = set()
        for chunk in _chunks(list(ids), len(ids)):
            have |= set(self._exec(select(t.c.instance_id).where(t.c.instance_id.in_(chunk))).scalars())
        for i in ids:
            if i in have:
                continue
            try:
                with self.tx.conn().begin_nested():
                    self._exec(insert(t), {"instance_id": i, "owner": owner, "expires_at": now - timedelta(seconds=1),
                                           "state": {}})
            except IntegrityError:
                pass  # another process inserted it meanwhile

    def release(self, owner: str, instance_ids: Sequence[str], *, leaving: bool = False) -> None:
        """Give leases back (free at once); `leaving`: `owner` stops watching (no longer counted as
        a live watcher, so the others take all at their next round)."""
        t = self.table
        instance_ids = [*instance_ids, WATCHER + owner] if leaving else list(instance_ids)
        for chunk in _chunks(list(instance_ids), len(instance_ids)):
            self._exec(update(t).where(t.c.instance_id.in_(chunk), t.c.owner == owner)
                       .values(expires_at=datetime(1970, 1, 1, tzinfo=UTC)))

    def forget(self, keep: Sequence[str], now: datetime) -> None:
        """Drop the rows of instances no longer watched, and of watchers gone for a day."""
        t = self.table
        own = or_(t.c.instance_id.startswith(WATCHER), t.c.instance_id.startswith(SHARED))
        self._exec(delete(t).where(and_(t.c.instance_id.not_in(list(keep)), ~own)))
        self._exec(delete(t).where(t.c.instance_id.startswith(WATCHER),
                                   t.c.expires_at < as_utc(now) - timedelta(days=1)))

    def state(self, instance_id: str) -> dict[str, Any]:
        t = self.table
        got = self._exec(select(t.c.state).where(t.c.instance_id == instance_id)).scalar_one_or_none()
        return dict(got or {})

    def states(self, instance_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """`state` of many (one query per 500), only those with any."""
        t = self.table
        out: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(list(instance_ids), len(instance_ids)):
            for iid, st in self._exec(select(t.c.instance_id, t.c.state).where(t.c.instance_id.in_(chunk))).all():
                if st:
                    out[str(iid)] = dict(st)
        return out

    def put_state(self, instance_id: str, owner: str, state: dict[str, Any]) -> bool:
        """Store the holder's bookkeeping; False when `owner` does not hold the lease any more."""
        t = self.table
        res = self._exec(update(t).where(t.c.instance_id == instance_id, t.c.owner == owner).values(state=state))
        return bool(res.rowcount == 1)


def _chunks(items: Sequence[str], n: int, size: int = 500) -> builtins.list[builtins.list[str]]:
    items = list(items)[:n]
    return [items[i:i + size] for i in range(0, len(items), size)]
