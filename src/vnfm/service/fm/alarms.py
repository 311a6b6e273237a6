"""Alarms: listed, shown and acknowledged through /vnffm/v1; raised and cleared by the health
watcher, each change notified to FM subscribers through the outbox in the same transaction."""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from vnfm.domain.alarms import (
    HEALTH_CAUSES,
    AckState,
    Alarm,
    PerceivedSeverity,
    alarm_cleared_notification,
    alarm_notification,
)
from vnfm.domain.errors import Conflict, NotFound
from vnfm.domain.model import utcnow
from vnfm.service import requests as rq
from vnfm.service.notifications import Notifications
from vnfm.service.ports import Condition, Notifier, UowFactory


@dataclass(frozen=True)
class Finding:
    """What the watcher found wrong with one VNFC (None in `record`'s map: healthy)."""

    probable_cause: str
    details: tuple[str, ...]
    severity: PerceivedSeverity = PerceivedSeverity.MAJOR
    faulty_resource: dict[str, Any] | None = None  # the server's ResourceHandle
    fault_type: str | None = None  # e.g. the certificate an expiry alarm is about


class AlarmService:
    def __init__(self, uow: UowFactory, notifier: Notifier | None = None, worker_id: str | None = None) -> None:
        self.uow = uow
        self.notes = Notifications(notifier, worker_id)

    # ------------------------------------------------------------------ API
    def page(self, conditions: Sequence[Condition], after_id: str | None, limit: int) -> builtins.list[Alarm]:
        with self.uow() as uow:
            return uow.alarms.page(conditions, after_id, limit)

    def get(self, alarm_id: str) -> Alarm:
        with self.uow() as uow:
            alarm = uow.alarms.get(alarm_id)
        if alarm is None:
            raise NotFound(f"alarm {alarm_id} does not exist")
        return alarm

    def acknowledge(self, alarm_id: str, body: Any) -> dict[str, Any]:
        """PATCH (SOL003 7.4.3.3.4): AlarmModifications; 409 when it is acknowledged already."""
        req = rq.parse(rq.AlarmModifications, body)
        with self.uow() as uow:
            alarm = uow.alarms.get(alarm_id)
            if alarm is None:
                raise NotFound(f"alarm {alarm_id} does not exist")
            if alarm.ack_state is AckState.ACKNOWLEDGED:
                raise Conflict(f"alarm {alarm_id} is acknowledged already")
            alarm.ack_state = AckState.ACKNOWLEDGED
            alarm.alarm_changed_time = utcnow()
            uow.alarms.save(alarm)
            uow.commit()
        return {"ackState": req.ackState}

    def open_for(self, instance_id: str) -> builtins.list[Alarm]:
        with self.uow() as uow:
            return uow.alarms.open_for([instance_id])

    # ------------------------------------------------------------------ the watchers' side
    def record(self, instance_id: str, tenant: str, findings: dict[str, Finding | None],
               causes: Collection[str] | None = HEALTH_CAUSES, *, replace: bool = False
               ) -> tuple[builtins.list[Alarm], builtins.list[Alarm]]:
        """Reconcile the open alarms of `instance_id` whose probable cause is one of `causes` (the
        caller's: the health watcher's, the certificate watch's; None: every alarm) with `findings`
        (VNFC -> what is wrong, None: healthy): raise an alarm for each VNFC found unhealthy that
        has none open, clear the open alarm of each VNFC found healthy or not in `findings` (it left
        the VNF). An open alarm whose severity changed is updated (alarmChangedTime, faultDetails)
        and notified again (SOL003 7.5.2.5: an AlarmNotification also when an alarm's severity changes); with
        `replace`, one whose probable cause changed is cleared and a new one raised (otherwise it
        stays as raised). Returns (raised, cleared)."""
        raised: builtins.list[Alarm] = []
        cleared: builtins.list[Alarm] = []
        changed: builtins.list[Alarm] = []
        now = utcnow()
        with self.uow() as uow:
            open_ = [a for a in uow.alarms.open_for([instance_id]) if causes is None or a.probable_cause in causes]
            for alarm in open_:
                f = findings.get(alarm.vnfc_id)
                if f is None or (replace and f.probable_cause != alarm.probable_cause):
                    alarm.alarm_cleared_time = alarm.alarm_changed_time = now
                    cleared.append(alarm)
                elif f.probable_cause == alarm.probable_cause and f.severity != alarm.perceived_severity:
                    alarm.perceived_severity, alarm.fault_details = f.severity, list(f.details)
                    alarm.alarm_changed_time = now
                    uow.alarms.save(alarm)
                    changed.append(alarm)
                    self.notes.stage(uow, alarm_notification(alarm), {"vnfInstanceId": instance_id}, tenant=tenant)
            for alarm in cleared:
                uow.alarms.save(alarm)
                self.notes.stage(uow, alarm_cleared_notification(alarm), {"vnfInstanceId": instance_id},
                                 tenant=tenant)
            gone = {a.id for a in cleared}
            still = {a.vnfc_id for a in open_ if a.id not in gone}
            for vnfc_id, f in sorted(findings.items()):
                if f is None or vnfc_id in still:
                    continue
                alarm = Alarm(managed_object_id=instance_id, vnfc_id=vnfc_id, probable_cause=f.probable_cause,
                              perceived_severity=f.severity, fault_details=list(f.details), fault_type=f.fault_type,
                              faulty_resource=f.faulty_resource, alarm_raised_time=now, event_time=now,
                              tenant=tenant)
                uow.alarms.add(alarm)
                self.notes.stage(uow, alarm_notification(alarm), {"vnfInstanceId": instance_id}, tenant=tenant)
                raised.append(alarm)
            if raised or cleared or changed:
                uow.commit()
        if raised or cleared or changed:
            self.notes.wake()
        return raised, cleared
