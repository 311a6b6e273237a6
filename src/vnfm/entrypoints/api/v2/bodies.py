"""SOL003 v3.3.1 request bodies of /vnflcm/v2, validated, and what the core's services take.

The services validate SOL003 v2.6.1 bodies (service/requests.py); each v3.3.1 body is checked
here first (an attribute the standard does not define is a 400 naming it, as on v1) and then
mapped: vimConnectionInfo from v3.3.1's map (id -> entry) to v2.6.1's list, heal's vnfcInstanceId
from VnfcInfo ids to the VNFC ids the core keys, a modification's vnfdId checked against the
instance's. What v3.3.1 defines but vnfm does not act on is refused (422) naming the attribute,
never dropped.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import VnfInstance
from vnfm.service import requests as rq
from vnfm.service.views_v2 import vim_list


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class VimConnectionInfo(_Open):
    """SOL003 v3.3.1 VimConnectionInfo: a value of the map keyed by its id."""

    vimId: str | None = None
    vimType: str
    interfaceInfo: dict[str, Any] | None = None
    accessInfo: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None


class CreateVnfRequest(_Strict):
    vnfdId: str
    vnfInstanceName: str | None = None
    vnfInstanceDescription: str | None = None
    metadata: dict[str, Any] | None = None


class InstantiateVnfRequest(_Strict):
    flavourId: str
    instantiationLevelId: str | None = None
    targetScaleLevelInfo: list[dict[str, Any]] | None = None
    extVirtualLinks: list[dict[str, Any]] | None = None
    extManagedVirtualLinks: list[dict[str, Any]] | None = None
    vimConnectionInfo: dict[str, VimConnectionInfo] | None = None
    localizationLanguage: str | None = None
    additionalParams: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    vnfConfigurableProperties: dict[str, Any] | None = None


class ScaleVnfRequest(_Strict):
    type: Literal["SCALE_OUT", "SCALE_IN"]
    aspectId: str
    numberOfSteps: int = 1
    additionalParams: dict[str, Any] | None = None


class HealVnfRequest(_Strict):
    vnfcInstanceId: list[str] | None = None
    cause: str | None = None
    additionalParams: dict[str, Any] | None = None

    @field_validator("vnfcInstanceId", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


# v3.3.1's TerminateVnfRequest is v2.6.1's, attribute for attribute
TerminateVnfRequest = rq.TerminateVnfRequest


class VnfInfoModificationRequest(_Strict):
    vnfInstanceName: str | None = None
    vnfInstanceDescription: str | None = None
    vnfdId: str | None = None
    vnfConfigurableProperties: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    vimConnectionInfo: dict[str, VimConnectionInfo | None] | None = None
    vnfcInfoModifications: list[dict[str, Any]] | None = None


class ChangeCurrentVnfPkgRequest(_Strict):
    """SOL003 v3.3.1 5.5.2.11a."""

    vnfdId: str
    extVirtualLinks: list[dict[str, Any]] | None = None
    extManagedVirtualLinks: list[dict[str, Any]] | None = None
    vimConnectionInfo: dict[str, VimConnectionInfo] | None = None
    additionalParams: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    vnfConfigurableProperties: dict[str, Any] | None = None


def _refuse(request: str, present: dict[str, Any], names: tuple[str, ...]) -> None:
    for name in names:
        if name in present:
            raise UnprocessableEntity(f"{request}.{name}: vnfm does not implement it (SOL003 v3.3.1 defines it; "
                                      "send the request without it)")


def _vims(conns: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    return None if conns is None else vim_list(conns)


def create(body: Any) -> dict[str, Any]:
    return rq.dump(rq.parse(CreateVnfRequest, body))


def instantiate(body: Any) -> dict[str, Any]:
    doc = rq.dump(rq.parse(InstantiateVnfRequest, body))
    _refuse("InstantiateVnfRequest", doc, ("targetScaleLevelInfo", "extensions"))  # vnfConfigurableProperties:
    # the v1 request takes it too (isAutohealEnabled, service/fm; a non-boolean is refused there)
    if "vimConnectionInfo" in doc:
        doc["vimConnectionInfo"] = _vims(doc["vimConnectionInfo"])
    return doc


def scale(body: Any) -> dict[str, Any]:
    return rq.dump(rq.parse(ScaleVnfRequest, body))


def terminate(body: Any) -> dict[str, Any]:
    return rq.dump(rq.parse(TerminateVnfRequest, body))


def heal(body: Any, inst: VnfInstance) -> dict[str, Any]:
    """vnfcInstanceId names VnfcInfo ids (SOL003 v3.3.1 5.5.2.9); the core heals VNFCs by their
    VnfcResourceInfo id (VnfcInfo id = that id + "-info"), which is accepted too."""
    doc = rq.dump(rq.parse(HealVnfRequest, body))
    if doc.get("vnfcInstanceId"):
        known = {v.id for v in inst.resources.vnfcs}
        doc["vnfcInstanceId"] = [i[: -len("-info")] if i.endswith("-info") and i[: -len("-info")] in known else i
                                 for i in doc["vnfcInstanceId"]]
    return doc


def modify(body: Any, inst: VnfInstance) -> dict[str, Any]:
    doc = rq.dump(rq.parse(VnfInfoModificationRequest, body))
    _refuse("VnfInfoModificationRequest", doc, ("vnfcInfoModifications",))
    vnfd_id = doc.pop("vnfdId", None)
    if vnfd_id is not None and vnfd_id != inst.vnfd_id:
        raise UnprocessableEntity("VnfInfoModificationRequest.vnfdId: the VNF's package changes through "
                                  "change_vnfpkg (POST .../change_vnfpkg), not by modification")
    conns = doc.pop("vimConnectionInfo", None)
    if conns is not None:
        removed = sorted(k for k, v in conns.items() if v is None)
        if removed:
            raise UnprocessableEntity(f"VnfInfoModificationRequest.vimConnectionInfo.{removed[0]}: removing a "
                                      "VIM connection is not supported")
        doc["vimConnectionInfo"] = vim_list(conns)
    return doc


def change_vnfpkg(body: Any) -> dict[str, Any]:
    """A validated ChangeCurrentVnfPkgRequest (its vimConnectionInfo as the core's list)."""
    doc = rq.dump(rq.parse(ChangeCurrentVnfPkgRequest, body))
    if "vimConnectionInfo" in doc:
        doc["vimConnectionInfo"] = _vims(doc["vimConnectionInfo"])
    return doc
