"""The SOL003 v3.3.1 data model (clause 5.5, SOL013 v3 ProblemDetails / ApiVersionInformation)
as pydantic models, written from the specification's tables for the contract tests.

Documents vnfm answers are checked against them strictly: an attribute the data model does not
define (e.g. v2.6.1's vnfPkgId) fails, as does a missing required one or a value outside an enum.
The only extra attributes allowed are vnfm's own, named here (vnfmProgress, vnfmWarnings).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

OpState = Literal["STARTING", "PROCESSING", "COMPLETED", "FAILED_TEMP", "FAILED", "ROLLING_BACK", "ROLLED_BACK"]
Operation = Literal["INSTANTIATE", "SCALE", "SCALE_TO_LEVEL", "CHANGE_FLAVOUR", "TERMINATE", "HEAL", "OPERATE",
                    "CHANGE_EXT_CONN", "MODIFY_INFO", "CREATE_SNAPSHOT", "REVERT_TO_SNAPSHOT", "CHANGE_VNFPKG"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Link(Strict):
    href: str


class ProblemDetails(BaseModel):  # RFC 7807 lets a problem carry extension members
    type: str | None = None
    title: str | None = None
    status: int
    detail: str
    instance: str | None = None


class ApiVersion(Strict):
    version: str
    isDeprecated: bool | None = None
    retirementDate: str | None = None


class ApiVersionInformation(Strict):
    uriPrefix: str
    apiVersions: list[ApiVersion] = Field(min_length=1)


class ResourceHandle(Strict):
    vimConnectionId: str | None = None
    resourceProviderId: str | None = None
    resourceId: str
    vimLevelResourceType: str | None = None


class VimConnectionInfo(Strict):  # v3.3.1: a map value, no id
    vimId: str | None = None
    vimType: str
    interfaceInfo: dict[str, Any] | None = None
    accessInfo: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None


class IpAddress(Strict):
    type: Literal["IPV4", "IPV6"]
    addresses: list[str] | None = None
    isDynamic: bool | None = None
    addressRange: dict[str, Any] | None = None
    subnetId: str | None = None


class IpOverEthernet(Strict):
    macAddress: str | None = None
    segmentationId: str | None = None
    ipAddresses: list[IpAddress] | None = None


class CpProtocolInfo(Strict):
    layerProtocol: Literal["IP_OVER_ETHERNET", "IP_FOR_VIRTUAL_CP"]
    ipOverEthernet: IpOverEthernet | None = None
    virtualCpAddress: dict[str, Any] | None = None


class VnfExtCpInfo(Strict):
    id: str
    cpdId: str
    cpConfigId: str
    vnfdId: str | None = None
    cpProtocolInfo: list[CpProtocolInfo]
    extLinkPortId: str | None = None
    metadata: dict[str, Any] | None = None
    associatedVnfcCpId: str | None = None
    associatedVipCpId: str | None = None
    associatedVirtualCpId: str | None = None
    associatedVnfVirtualLinkId: str | None = None


class ExtLinkPortInfo(Strict):
    id: str
    resourceHandle: ResourceHandle
    cpInstanceId: str | None = None
    secondaryCpInstanceId: str | None = None
    trunkResourceId: str | None = None


class VnfExtCpData(Strict):
    cpdId: str
    cpConfig: dict[str, dict[str, Any]] | None = None


class ExtVirtualLinkInfo(Strict):
    id: str
    resourceHandle: ResourceHandle
    extLinkPorts: list[ExtLinkPortInfo] | None = None
    currentVnfExtCpData: list[VnfExtCpData]


class VnfLinkPortInfo(Strict):
    id: str
    resourceHandle: ResourceHandle
    cpInstanceId: str | None = None
    cpInstanceType: Literal["VNFC_CP", "EXT_CP", "VIRTUAL_CP"] | None = None
    vipCpInstanceId: str | None = None
    trunkResourceId: str | None = None

    @model_validator(mode="after")
    def _typed(self) -> VnfLinkPortInfo:
        assert (self.cpInstanceId is None) == (self.cpInstanceType is None), "cpInstanceType goes with cpInstanceId"
        return self


class VnfVirtualLinkResourceInfo(Strict):
    id: str
    vnfVirtualLinkDescId: str
    vnfdId: str | None = None
    networkResource: ResourceHandle
    zoneId: str | None = None
    reservationId: str | None = None
    vnfLinkPorts: list[VnfLinkPortInfo] | None = None
    metadata: dict[str, Any] | None = None


class VirtualStorageResourceInfo(Strict):
    id: str
    virtualStorageDescId: str
    vnfdId: str | None = None
    storageResource: ResourceHandle
    zoneId: str | None = None
    reservationId: str | None = None
    metadata: dict[str, Any] | None = None


class VnfcCpInfo(Strict):
    id: str
    cpdId: str
    vnfExtCpId: str | None = None
    cpProtocolInfo: list[CpProtocolInfo] | None = None
    vnfLinkPortId: str | None = None
    parentCpId: str | None = None
    metadata: dict[str, Any] | None = None


class VnfcResourceInfo(Strict):
    id: str
    vduId: str
    vnfdId: str | None = None
    computeResource: ResourceHandle
    zoneId: str | None = None
    storageResourceIds: list[str] | None = None
    reservationId: str | None = None
    vnfcCpInfo: list[VnfcCpInfo] | None = None
    metadata: dict[str, Any] | None = None


class VnfcInfo(Strict):
    id: str
    vduId: str
    vnfcResourceInfoId: str | None = None
    vnfcState: Literal["STARTED", "STOPPED"]
    vnfcConfigurableProperties: dict[str, Any] | None = None


class ScaleInfo(Strict):
    aspectId: str
    vnfdId: str | None = None
    scaleLevel: int


class InstantiatedVnfInfo(Strict):
    flavourId: str
    vnfState: Literal["STARTED", "STOPPED"]
    scaleStatus: list[ScaleInfo] | None = None
    maxScaleLevels: list[ScaleInfo] | None = None
    extCpInfo: list[VnfExtCpInfo] = Field(min_length=1)
    extVirtualLinkInfo: list[ExtVirtualLinkInfo] | None = None
    extManagedVirtualLinkInfo: list[dict[str, Any]] | None = None
    monitoringParameters: list[dict[str, Any]] | None = None
    localizationLanguage: str | None = None
    vnfcResourceInfo: list[VnfcResourceInfo] | None = None
    vnfVirtualLinkResourceInfo: list[VnfVirtualLinkResourceInfo] | None = None
    virtualStorageResourceInfo: list[VirtualStorageResourceInfo] | None = None
    mcioInfo: list[dict[str, Any]] | None = None
    vnfcInfo: list[VnfcInfo] | None = None


class VnfInstanceLinks(Strict):
    self_: Link = Field(alias="self")
    indicators: Link | None = None
    instantiate: Link | None = None
    terminate: Link | None = None
    scale: Link | None = None
    scaleToLevel: Link | None = None
    changeFlavour: Link | None = None
    heal: Link | None = None
    operate: Link | None = None
    changeExtConn: Link | None = None
    createSnapshot: Link | None = None
    revertToSnapshot: Link | None = None


class VnfInstance(Strict):
    id: str
    vnfInstanceName: str | None = None
    vnfInstanceDescription: str | None = None
    vnfdId: str
    vnfProvider: str
    vnfProductName: str
    vnfSoftwareVersion: str
    vnfdVersion: str
    vnfConfigurableProperties: dict[str, Any] | None = None
    vimConnectionInfo: dict[str, VimConnectionInfo] | None = None
    cirConnectionInfo: dict[str, Any] | None = None
    mciopRepositoryInfo: dict[str, Any] | None = None
    instantiationState: Literal["NOT_INSTANTIATED", "INSTANTIATED"]
    instantiatedVnfInfo: InstantiatedVnfInfo | None = None
    metadata: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    links: VnfInstanceLinks = Field(alias="_links")


class VnfInfoModifications(Strict):
    vnfInstanceName: str | None = None
    vnfInstanceDescription: str | None = None
    vnfConfigurableProperties: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    vimConnectionInfo: dict[str, VimConnectionInfo] | None = None
    vnfdId: str | None = None
    vnfProvider: str | None = None
    vnfProductName: str | None = None
    vnfSoftwareVersion: str | None = None
    vnfdVersion: str | None = None
    vnfcInfoModifications: list[dict[str, Any]] | None = None


class AffectedVnfc(Strict):
    id: str
    vduId: str
    vnfdId: str | None = None
    changeType: Literal["ADDED", "REMOVED", "MODIFIED", "TEMPORARY"]
    computeResource: ResourceHandle
    resourceDefinitionId: str | None = None
    zoneId: str | None = None
    metadata: dict[str, Any] | None = None
    affectedVnfcCpIds: list[str] | None = None
    addedStorageResourceIds: list[str] | None = None
    removedStorageResourceIds: list[str] | None = None


class ResourceChanges(Strict):
    affectedVnfcs: list[AffectedVnfc] | None = None
    affectedVirtualLinks: list[dict[str, Any]] | None = None
    affectedExtLinkPorts: list[dict[str, Any]] | None = None
    affectedVirtualStorages: list[dict[str, Any]] | None = None


class OpOccLinks(Strict):
    self_: Link = Field(alias="self")
    vnfInstance: Link
    grant: Link | None = None
    cancel: Link | None = None
    retry: Link | None = None
    rollback: Link | None = None
    fail: Link | None = None
    vnfSnapshot: Link | None = None


class VnfLcmOpOcc(Strict):
    id: str
    operationState: OpState
    stateEnteredTime: str
    startTime: str
    vnfInstanceId: str
    grantId: str | None = None
    operation: Operation
    isAutomaticInvocation: bool
    operationParams: dict[str, Any] | None = None
    isCancelPending: bool
    cancelMode: Literal["GRACEFUL", "FORCEFUL"] | None = None
    error: ProblemDetails | None = None
    resourceChanges: ResourceChanges | None = None
    changedInfo: VnfInfoModifications | None = None
    changedExtConnectivity: list[ExtVirtualLinkInfo] | None = None
    modificationsTriggeredByVnfPkgChange: dict[str, Any] | None = None
    vnfSnapshotInfoId: str | None = None
    lcmCoordinations: list[dict[str, Any]] | None = None
    rejectedLcmCoordinations: list[dict[str, Any]] | None = None
    warnings: list[str] | None = None
    links: OpOccLinks = Field(alias="_links")
    # vnfm's own, on a single occurrence (as on /vnflcm/v1)
    vnfmProgress: list[Any] | None = None
    vnfmWarnings: list[Any] | None = None


class SubscriptionLinks(Strict):
    self_: Link = Field(alias="self")


class LccnSubscription(Strict):
    id: str
    filter: dict[str, Any] | None = None
    callbackUri: str
    verbosity: Literal["FULL", "SHORT"] | None = None
    links: SubscriptionLinks = Field(alias="_links")


class LccnLinks(Strict):
    vnfInstance: Link
    subscription: Link
    vnfLcmOpOcc: Link | None = None


class VnfLcmOperationOccurrenceNotification(Strict):
    id: str
    notificationType: Literal["VnfLcmOperationOccurrenceNotification"]
    subscriptionId: str
    timeStamp: str
    notificationStatus: Literal["START", "RESULT"]
    operationState: OpState
    vnfInstanceId: str
    operation: Operation
    isAutomaticInvocation: bool
    verbosity: Literal["FULL", "SHORT"] | None = None
    vnfLcmOpOccId: str
    affectedVnfcs: list[AffectedVnfc] | None = None
    affectedVirtualLinks: list[dict[str, Any]] | None = None
    affectedExtLinkPorts: list[dict[str, Any]] | None = None
    affectedVirtualStorages: list[dict[str, Any]] | None = None
    changedInfo: VnfInfoModifications | None = None
    changedExtConnectivity: list[ExtVirtualLinkInfo] | None = None
    modificationsTriggeredByVnfPkgChange: dict[str, Any] | None = None
    error: ProblemDetails | None = None
    links: LccnLinks = Field(alias="_links")


class VnfIdentifierNotification(Strict):
    id: str
    notificationType: Literal["VnfIdentifierCreationNotification", "VnfIdentifierDeletionNotification"]
    subscriptionId: str
    timeStamp: str
    vnfInstanceId: str
    links: LccnLinks = Field(alias="_links")
