"""The SOL003 v2.6.1 request bodies, validated. Errors name the attribute and say why."""

from __future__ import annotations

import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError, field_validator

from vnfm.domain.certificates import AUTO_RENEW_PROPERTY
from vnfm.domain.errors import BadRequest


class _Strict(BaseModel):
    """Top-level request bodies: attributes the standard does not define are rejected."""

    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class VimConnectionInfo(_Open):
    id: str
    vimId: str | None = None
    vimType: str
    interfaceInfo: dict[str, Any] | None = None
    accessInfo: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None


class VnfExtCpData(_Open):
    cpdId: str
    cpConfig: list[dict[str, Any]] | dict[str, Any] | None = None


class ExtVirtualLinkData(_Open):
    id: str
    vimConnectionId: str | None = None
    resourceProviderId: str | None = None
    resourceId: str
    extCps: list[VnfExtCpData] = Field(default_factory=list)
    extLinkPorts: list[dict[str, Any]] | None = None


class CreateVnfRequest(_Strict):
    vnfdId: str
    vnfInstanceName: str | None = None
    vnfInstanceDescription: str | None = None
    metadata: dict[str, Any] | None = None


def _check_autoheal_flag(v: dict[str, Any] | None) -> dict[str, Any] | None:
    if v is not None and "isAutohealEnabled" in v and not isinstance(v["isAutohealEnabled"], bool | None):
        raise ValueError("isAutohealEnabled must be true or false (the automatic heal, service/fm)")
    if v is not None and AUTO_RENEW_PROPERTY in v and not isinstance(v[AUTO_RENEW_PROPERTY], bool | None):
        raise ValueError(f"{AUTO_RENEW_PROPERTY} must be true, false or null (this instance's automatic "
                         "certificate renewal; null: VNFM_CERT_AUTO_RENEW decides)")
    if v is not None and v.get("isAutoscaleEnabled") is True:
        raise ValueError("isAutoscaleEnabled: vnfm does not scale automatically (only isAutohealEnabled acts)")
    return v


class InstantiateVnfRequest(_Strict):
    flavourId: str
    instantiationLevelId: str | None = None
    extVirtualLinks: list[ExtVirtualLinkData] | None = None
    extManagedVirtualLinks: list[dict[str, Any]] | None = None
    vimConnectionInfo: list[VimConnectionInfo] | None = None
    localizationLanguage: str | None = None
    additionalParams: dict[str, Any] | None = None
    # Tacker's (SOL003 v3.x) instantiate attribute, accepted here for isAutohealEnabled (service/fm)
    vnfConfigurableProperties: dict[str, Any] | None = None

    @field_validator("vnfConfigurableProperties")
    @classmethod
    def _autoheal_flag(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return _check_autoheal_flag(v)


class ScaleVnfRequest(_Strict):
    type: Literal["SCALE_OUT", "SCALE_IN"]
    aspectId: str
    numberOfSteps: int = 1  # the seeds send "1" (a string): lax mode accepts numeric strings
    additionalParams: dict[str, Any] | None = None

    @field_validator("numberOfSteps")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be a positive integer")
        return v


class HealVnfRequest(_Strict):
    vnfcInstanceId: list[str] | None = None  # SOL002; accepted on the SOL003 API too
    cause: str | None = None
    additionalParams: dict[str, Any] | None = None
    healScript: str | None = None

    @field_validator("vnfcInstanceId", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class ChangeCurrentVnfPkgRequest(_Strict):
    vnfdId: str
    extVirtualLinks: list[ExtVirtualLinkData] | None = None
    extManagedVirtualLinks: list[dict[str, Any]] | None = None
    vimConnectionInfo: list[VimConnectionInfo] | None = None
    additionalParams: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    vnfConfigurableProperties: dict[str, Any] | None = None


class TerminateVnfRequest(_Strict):
    terminationType: Literal["FORCEFUL", "GRACEFUL"]
    gracefulTerminationTimeout: int | None = None
    additionalParams: dict[str, Any] | None = None


class VnfInfoModificationRequest(_Strict):
    vnfInstanceName: str | None = None
    vnfInstanceDescription: str | None = None
    vnfPkgId: str | None = None
    vnfConfigurableProperties: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    vimConnectionInfo: list[dict[str, Any]] | None = None

    @field_validator("vnfConfigurableProperties")
    @classmethod
    def _autoheal_flag(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return _check_autoheal_flag(v)


class LccnSubscriptionRequest(_Strict):
    filter: dict[str, Any] | None = None
    callbackUri: str
    authentication: dict[str, Any] | None = None


class LccnSubscriptionRequestV2(LccnSubscriptionRequest):
    """SOL003 v3.3.1 5.5.2.15: v2.6.1's attributes plus the verbosity of its notifications."""

    verbosity: Literal["FULL", "SHORT"] | None = None


class CancelMode(_Strict):
    cancelMode: Literal["GRACEFUL", "FORCEFUL"]


class UploadVnfPkgFromUriRequest(_Strict):
    addressInformation: str
    userName: str | None = None
    password: str | None = None


class PkgmSubscriptionRequest(LccnSubscriptionRequest):
    """SOL005 9.5.2.3: the same attributes; its filter is a PkgmNotificationsFilter."""


class FmSubscriptionRequest(LccnSubscriptionRequest):
    """SOL003 7.5.2.2: the same attributes; its filter is an FmNotificationsFilter."""


class AlarmModifications(_Strict):
    """SOL003 7.5.2.8: the only change an alarm takes is its acknowledgement."""

    model_config = ConfigDict(extra="forbid", strict=True)
    ackState: Literal["ACKNOWLEDGED"]


class SimFaultsRequest(_Strict):
    """POST /sim/v1/faults (vnfm's simulated cloud): the faults `SimCloud.inject` takes."""

    model_config = ConfigDict(extra="forbid", strict=True)
    fail_build: dict[str, NonNegativeInt] | None = None
    build_message: str | None = None
    unreachable: list[str] | None = None
    unreachable_next: dict[str, NonNegativeInt] | None = None
    fail_delete: NonNegativeInt | None = None
    stopped: list[str] | None = None


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], body: Any) -> M:
    """Validate `body` against `model`; raise BadRequest naming every bad attribute."""
    if not isinstance(body, dict):
        raise BadRequest(f"{model.__name__} must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "(body)"
            msg = "not an attribute of " + model.__name__ if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(f"{loc}: {msg}")
        raise BadRequest(f"invalid {model.__name__}: " + "; ".join(problems)) from None


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


# ----------------------------------------------------------------------------- control characters
# NUL and the C0 controls other than TAB, LF and CR have no use in any attribute (PostgreSQL cannot
# even store NUL in text). TAB, LF and CR are fine in free text (descriptions, scripts, keys and
# certificates in additionalParams) but not in identifiers, names, types and URIs, nor in any key.
_NEVER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Lone surrogates (U+D800-U+DFFF) are not text: JSON lets "\ud800" through, but no UTF-8 encoder
# (the database, a log, a response) can write it. Refused in keys and values alike.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_STRICT_KEY = re.compile(r"(?:^|[a-z])(?:id|Id|Ids|Uri|Name|Type|type|State|Version)$|^(?:name|vimType)$")


def _where(path: list[str]) -> str:
    return ".".join(path) or "(body)"


def _indexed(path: list[str], i: int) -> list[str]:
    return [*path[:-1], f"{path[-1]}[{i}]"] if path else [f"[{i}]"]


def refuse_control_characters(doc: Any) -> None:
    """BadRequest naming the first attribute whose key or value holds a control character that the
    data model has no use for, or text that cannot be stored faithfully (a lone surrogate; NUL is a
    control character). Iterative: the caller bounds the depth."""
    stack: list[tuple[Any, list[str], bool]] = [(doc, [], False)]
    while stack:
        node, path, strict = stack.pop()
        if isinstance(node, str):
            _refuse_surrogate(node, _where(path))
            bad = (_ANY_CONTROL if strict else _NEVER).search(node)
            if bad:
                raise BadRequest(f"{_where(path)}: control character U+{ord(bad.group()):04X} is not allowed here")
        elif isinstance(node, dict):
            for key, value in node.items():
                _refuse_surrogate(str(key), f"{_where(path)}: an attribute name")
                if _ANY_CONTROL.search(str(key)):
                    raise BadRequest(f"{_where(path)}: an attribute name holds a control character "
                                     f"({str(key)[:40]!r})")
                stack.append((value, [*path, str(key)], bool(_STRICT_KEY.search(str(key)))))
        elif isinstance(node, list):
            stack.extend((item, _indexed(path, i), strict) for i, item in enumerate(node))


def _refuse_surrogate(text: str, where: str) -> None:
    bad = _SURROGATE.search(text)
    if bad:
        raise BadRequest(f"{where}: lone surrogate U+{ord(bad.group()):04X} is not text and cannot be stored")
