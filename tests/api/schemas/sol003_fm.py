"""SOL003 v2.6.1 clause 7 (VNF fault management) data model, written from the spec's tables as
strict pydantic models: an attribute the table does not list, a missing mandatory one, a value
outside an enumeration or of the wrong type fails validation. Contract fixtures for the tests."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class _S(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


DateTime = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")]
Severity = Literal["CRITICAL", "MAJOR", "MINOR", "WARNING", "INDETERMINATE", "CLEARED"]  # 7.5.4.3
EventType = Literal["COMMUNICATIONS_ALARM", "PROCESSING_ERROR_ALARM", "ENVIRONMENTAL_ALARM", "QOS_ALARM",
                    "EQUIPMENT_ALARM"]  # 7.5.4.5


class Link(_S):  # 4.4.1.3
    href: str


class ResourceHandle(_S):  # 4.4.1.7
    vimConnectionId: str | None = None
    resourceProviderId: str | None = None
    resourceId: str
    vimLevelResourceType: str | None = None


class FaultyResourceInfo(_S):  # 7.5.3.4
    faultyResource: ResourceHandle
    faultyResourceType: Literal["COMPUTE", "STORAGE", "NETWORK"]


class AlarmLinks(_S):
    self: Link
    objectInstance: Link | None = None


class Alarm(_S):  # 7.5.2.4
    id: str
    managedObjectId: str
    vnfcInstanceIds: list[str] | None = None
    rootCauseFaultyResource: FaultyResourceInfo | None = None
    alarmRaisedTime: DateTime
    alarmChangedTime: DateTime | None = None
    alarmClearedTime: DateTime | None = None
    ackState: Literal["UNACKNOWLEDGED", "ACKNOWLEDGED"]
    perceivedSeverity: Severity
    eventTime: DateTime
    eventType: EventType
    faultType: str | None = None
    probableCause: str
    isRootCause: bool
    correlatedAlarmIds: list[str] | None = None
    faultDetails: list[str] | None = None
    links: AlarmLinks = Field(alias="_links")


class SubscriptionLink(_S):
    subscription: Link


class AlarmNotification(_S):  # 7.5.2.5
    id: str
    notificationType: Literal["AlarmNotification"]
    subscriptionId: str
    timeStamp: DateTime
    alarm: Alarm
    links: SubscriptionLink = Field(alias="_links")


class ClearedLinks(_S):
    subscription: Link
    alarm: Link


class AlarmClearedNotification(_S):  # 7.5.2.6
    id: str
    notificationType: Literal["AlarmClearedNotification"]
    subscriptionId: str
    timeStamp: DateTime
    alarmId: str
    alarmClearedTime: DateTime
    links: ClearedLinks = Field(alias="_links")


class AlarmModifications(_S):  # 7.5.2.8
    ackState: Literal["ACKNOWLEDGED"]


class FmSubscriptionLinks(_S):
    self: Link


class FmSubscription(_S):  # 7.5.2.3
    id: str
    filter: dict[str, object] | None = None
    callbackUri: str
    links: FmSubscriptionLinks = Field(alias="_links")
