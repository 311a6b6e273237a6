"""SOL003 v2.6.1 VNF fault management (clause 7): the Alarm and its vocabulary.

An alarm is raised per unhealthy VNFC of a VNF instance (`managedObjectId`), cleared when the VNFC
recovers (or leaves the VNF), acknowledged by an operator. At most one alarm per VNFC is open
(not cleared) at a time; a cleared alarm is kept for the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from vnfm.domain.access import DEFAULT_TENANT
from vnfm.domain.model import new_id, utcnow

FM = "/vnffm/v1"  # SOL003 VNF fault management API root

ALARM_NOTIFICATION = "AlarmNotification"
ALARM_CLEARED_NOTIFICATION = "AlarmClearedNotification"
ALARM_LIST_REBUILT_NOTIFICATION = "AlarmListRebuiltNotification"
# SOL003 v2.6.1 FmNotificationsFilter.notificationTypes
FM_NOTIFICATION_TYPES = frozenset({ALARM_NOTIFICATION, ALARM_CLEARED_NOTIFICATION, ALARM_LIST_REBUILT_NOTIFICATION})


class PerceivedSeverity(StrEnum):  # SOL003 7.5.4.3
    CRITICAL = "CRITICAL"
    MAJOR = "MAJOR"
    MINOR = "MINOR"
    WARNING = "WARNING"
    INDETERMINATE = "INDETERMINATE"
    CLEARED = "CLEARED"


class EventType(StrEnum):  # SOL003 7.5.4.5
    COMMUNICATIONS_ALARM = "COMMUNICATIONS_ALARM"
    PROCESSING_ERROR_ALARM = "PROCESSING_ERROR_ALARM"
    ENVIRONMENTAL_ALARM = "ENVIRONMENTAL_ALARM"
    QOS_ALARM = "QOS_ALARM"
    EQUIPMENT_ALARM = "EQUIPMENT_ALARM"


class FaultyResourceType(StrEnum):  # SOL003 7.5.4.4
    COMPUTE = "COMPUTE"
    STORAGE = "STORAGE"
    NETWORK = "NETWORK"


class AckState(StrEnum):
    UNACKNOWLEDGED = "UNACKNOWLEDGED"
    ACKNOWLEDGED = "ACKNOWLEDGED"


# The probable causes vnfm raises (free text in SOL003): what the VIM or the cluster's API said.
CAUSE_SERVER_DOWN = "VIM_SERVER_DOWN"  # the VIM reports the server ERROR, SHUTOFF or gone
CAUSE_NODE_NOT_READY = "KUBERNETES_NODE_NOT_READY"  # the node's Ready condition is not True
# a VNFC the cluster driver made a node is not in the cluster's API (never joined, or deleted)
CAUSE_NODE_ABSENT = "KUBERNETES_NODE_ABSENT"
# the node-health watcher's causes (service/fm/watcher.py): it raises and clears only these
HEALTH_CAUSES = frozenset({CAUSE_SERVER_DOWN, CAUSE_NODE_NOT_READY, CAUSE_NODE_ABSENT})
# the certificate watch's (service/certificates.py): a control plane's certificate expires within
# the warning threshold (WARNING, MAJOR within a week), or has expired (CRITICAL); `faultType`
# names the first certificate to expire, `faultDetails` each one with its notAfter
CAUSE_CERT_EXPIRING = "KUBERNETES_CERTIFICATE_EXPIRING"
CAUSE_CERT_EXPIRED = "KUBERNETES_CERTIFICATE_EXPIRED"
CERT_CAUSES = frozenset({CAUSE_CERT_EXPIRING, CAUSE_CERT_EXPIRED})


@dataclass
class Alarm:
    managed_object_id: str  # the VNF instance
    vnfc_id: str  # the one VNFC it is about (vnfcInstanceIds = [vnfc_id])
    probable_cause: str
    perceived_severity: PerceivedSeverity = PerceivedSeverity.MAJOR
    event_type: EventType = EventType.EQUIPMENT_ALARM
    fault_type: str | None = None
    fault_details: list[str] = field(default_factory=list)
    # FaultyResourceInfo: the server (ResourceHandle) of the VNFC when it had one
    faulty_resource: dict[str, Any] | None = None
    id: str = field(default_factory=new_id)
    alarm_raised_time: datetime = field(default_factory=utcnow)
    alarm_changed_time: datetime | None = None
    alarm_cleared_time: datetime | None = None
    event_time: datetime = field(default_factory=utcnow)
    ack_state: AckState = AckState.UNACKNOWLEDGED
    tenant: str = DEFAULT_TENANT  # the instance's

    @property
    def cleared(self) -> bool:
        return self.alarm_cleared_time is not None


def alarm_info(a: Alarm) -> dict[str, Any]:
    """The Alarm document (SOL003 v2.6.1 7.5.2.4)."""
    doc: dict[str, Any] = {
        "id": a.id,
        "managedObjectId": a.managed_object_id,
        "vnfcInstanceIds": [a.vnfc_id],
        "alarmRaisedTime": _ts(a.alarm_raised_time),
        "ackState": a.ack_state.value,
        "perceivedSeverity": (PerceivedSeverity.CLEARED if a.cleared else a.perceived_severity).value,
        "eventTime": _ts(a.event_time),
        "eventType": a.event_type.value,
        "probableCause": a.probable_cause,
        "isRootCause": True,
        "faultDetails": list(a.fault_details),
        "_links": {"self": {"href": f"{FM}/alarms/{a.id}"},
                   "objectInstance": {"href": f"/vnflcm/v1/vnf_instances/{a.managed_object_id}"}},
    }
    if a.faulty_resource:
        doc["rootCauseFaultyResource"] = {"faultyResource": dict(a.faulty_resource),
                                          "faultyResourceType": FaultyResourceType.COMPUTE.value}
    if a.alarm_changed_time is not None:
        doc["alarmChangedTime"] = _ts(a.alarm_changed_time)
    if a.alarm_cleared_time is not None:
        doc["alarmClearedTime"] = _ts(a.alarm_cleared_time)
    if a.fault_type:
        doc["faultType"] = a.fault_type
    return doc


def alarm_notification(a: Alarm) -> dict[str, Any]:
    """AlarmNotification (7.5.2.5) without id / subscriptionId / timeStamp (the notifier adds them)."""
    return {"notificationType": ALARM_NOTIFICATION, "alarm": alarm_info(a), "_links": {}}


def alarm_cleared_notification(a: Alarm) -> dict[str, Any]:
    """AlarmClearedNotification (7.5.2.6), as above."""
    return {"notificationType": ALARM_CLEARED_NOTIFICATION, "alarmId": a.id,
            "alarmClearedTime": _ts(a.alarm_cleared_time or utcnow()),
            "_links": {"alarm": {"href": f"{FM}/alarms/{a.id}"}}}


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")  # as every other vnfm timestamp
