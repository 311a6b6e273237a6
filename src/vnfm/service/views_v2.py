"""SOL003 v3.3.1 (VNF LCM API version 2.0.0, /vnflcm/v2) representations of the core's entities.

One data model serves both APIs: every v2 document here is the v2.6.1 one of `views` mapped to
v3.3.1, so an instance or occurrence looks the same through both, differing only where the
standards do:

- VnfInstance has no vnfPkgId (v3.3.1 identifies the package by vnfdId only) and its
  vimConnectionInfo is a map keyed by the connection id, not a list of entries with an id.
- InstantiatedVnfInfo: extCpInfo entries carry cpConfigId (the key of the cpConfig the request
  gave; for a v2.6.1 list: its index), extVirtualLinkInfo carries currentVnfExtCpData (the
  request's extCps), vnfLinkPorts carry cpInstanceType, vnfcResourceInfo carries vnfdId. The
  instantiate request's additionalParams and instantiationLevelId, which v2.6.1 shows in
  InstantiatedVnfInfo and v3.3.1 does not define there, are left out (the occurrence's
  operationParams keep them).
- VnfLcmOpOcc / VnfInfoModifications: vimConnectionInfo as a map, vnfdId instead of vnfPkgId.
- LccnSubscription carries verbosity; VnfLcmOperationOccurrenceNotification carries it too and,
  when SHORT, leaves out the affected resources and changes (SOL003 v3.3.1 5.5.2.17).
Every link points into /vnflcm/v2.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from vnfm.domain.model import OpOcc, Subscription, VnfInstance
from vnfm.domain.notifications import LCM, LCM_OCC_NOTIFICATION, LCM_V2
from vnfm.service import views

# Attributes of VnfLcmOperationOccurrenceNotification left out of a SHORT one (SOL003 v3.3.1 5.5.2.17)
SHORT_OMITS = ("affectedVnfcs", "affectedVirtualLinks", "affectedExtLinkPorts", "affectedVirtualStorages",
               "changedInfo", "changedExtConnectivity")


def v2_links(value: Any) -> Any:
    """`value` with every `href` into /vnflcm/v1 pointing to the same resource in /vnflcm/v2."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "href" and isinstance(v, str) and v.startswith(LCM + "/"):
                v = LCM_V2 + v[len(LCM):]
            out[k] = v2_links(v) if isinstance(v, dict) else v
        return out
    return value


def vim_map(entries: Any) -> Any:
    """v2.6.1's list of VimConnectionInfo (each with its id) -> v3.3.1's map id -> VimConnectionInfo."""
    if not isinstance(entries, list):
        return entries
    return {str(e.get("id")): {k: v for k, v in e.items() if k != "id"} for e in entries if isinstance(e, dict)}


def vim_list(conns: Mapping[str, Any]) -> list[dict[str, Any]]:
    """v3.3.1's map -> v2.6.1's list (the form the core stores)."""
    return [{"id": key, **value} for key, value in conns.items()]


def _cp_configs(ext_vl: Mapping[str, Any]) -> list[dict[str, Any]]:
    """VnfExtCpData of an extVirtualLinks entry, cpConfig as v3.3.1's map (a list's keys: indexes)."""
    out = []
    for cp in ext_vl.get("extCps") or []:
        if not isinstance(cp, dict):
            continue
        config = cp.get("cpConfig")
        if isinstance(config, list):
            config = {str(i): c for i, c in enumerate(config)}
        out.append({"cpdId": cp.get("cpdId"), **({"cpConfig": config} if config else {})})
    return out


def _cp_config_ids(inst: VnfInstance) -> dict[str, str]:
    """cpdId -> the key of the first cpConfig the instantiate request gave for it."""
    ids: dict[str, str] = {}
    for ext_vl in inst.ext_virtual_links:
        for cp in _cp_configs(ext_vl):
            keys = list(cp.get("cpConfig") or {})
            if cp.get("cpdId") and keys:
                ids.setdefault(str(cp["cpdId"]), keys[0])
    return ids


def _instantiated(inst: VnfInstance, info: dict[str, Any]) -> dict[str, Any]:
    info = {k: v for k, v in info.items() if k not in ("additionalParams", "instantiationLevelId")}
    configs = _cp_config_ids(inst)
    info["extCpInfo"] = [{**cp, "cpConfigId": configs.get(cp["cpdId"], cp["id"])} for cp in info["extCpInfo"]]
    ext_cps = {str(ev.get("id")): _cp_configs(ev) for ev in inst.ext_virtual_links}
    info["extVirtualLinkInfo"] = [{**ev, "currentVnfExtCpData": ext_cps.get(str(ev.get("id")), [])}
                                  for ev in info["extVirtualLinkInfo"]]
    info["vnfVirtualLinkResourceInfo"] = [
        {**vl, "vnfLinkPorts": [{**p, "cpInstanceType": "VNFC_CP"} if "cpInstanceId" in p else p
                                for p in vl.get("vnfLinkPorts", [])]}
        for vl in info["vnfVirtualLinkResourceInfo"]]
    info["vnfcResourceInfo"] = [{**v, "vnfdId": inst.vnfd_id} for v in info["vnfcResourceInfo"]]
    return info


def instance_info(inst: VnfInstance, omit: Collection[str] = ()) -> dict[str, Any]:
    """VnfInstance (SOL003 v3.3.1 5.5.2.2); `omit`: top-level attributes not to build."""
    body = views.instance_info(inst, omit)
    body.pop("vnfPkgId", None)
    if "vimConnectionInfo" in body:
        body["vimConnectionInfo"] = vim_map(body["vimConnectionInfo"])
    if "instantiatedVnfInfo" in body:
        body["instantiatedVnfInfo"] = _instantiated(inst, body["instantiatedVnfInfo"])
    body["_links"] = v2_links(body["_links"])
    return body


def changed_info(changes: Any) -> Any:
    """VnfInfoModifications: vimConnectionInfo as a map, vnfdId rather than vnfPkgId."""
    if not isinstance(changes, dict):
        return changes
    out = {k: v for k, v in changes.items() if k != "vnfPkgId"}
    if "vimConnectionInfo" in out:
        out["vimConnectionInfo"] = vim_map(out["vimConnectionInfo"])
    return out


def op_occ_info(occ: OpOcc) -> dict[str, Any]:
    """VnfLcmOpOcc (SOL003 v3.3.1 5.5.2.13)."""
    body = views.op_occ_info(occ)
    params = body.get("operationParams")
    if isinstance(params, dict) and "vimConnectionInfo" in params:
        body["operationParams"] = {**params, "vimConnectionInfo": vim_map(params["vimConnectionInfo"])}
    if "changedInfo" in body:
        body["changedInfo"] = changed_info(body["changedInfo"])
    body["_links"] = v2_links(body["_links"])
    return body


def subscription_info(sub: Subscription) -> dict[str, Any]:
    """LccnSubscription (SOL003 v3.3.1 5.5.2.16)."""
    return views.prune({
        "id": sub.id,
        "filter": sub.filter or None,
        "callbackUri": sub.callback_uri,
        "verbosity": sub.verbosity or "FULL",
        "_links": {"self": {"href": f"{LCM_V2}/subscriptions/{sub.id}"}},
    })


def notification(body: Mapping[str, Any], sub: Subscription) -> dict[str, Any]:
    """A v2.6.1 notification (as stored in the outbox) as SOL003 v3.3.1 sends it to `sub`: the
    VnfLcmOperationOccurrenceNotification with the subscription's verbosity, the identifier
    creation / deletion notifications with their links into /vnflcm/v2."""
    out = dict(body)
    if isinstance(out.get("_links"), dict):
        out["_links"] = v2_links(out["_links"])
    if out.get("notificationType") == LCM_OCC_NOTIFICATION:
        verbosity = sub.verbosity or "FULL"
        out["verbosity"] = verbosity
        if verbosity == "SHORT":
            for key in SHORT_OMITS:
                out.pop(key, None)
        elif "changedInfo" in out:
            out["changedInfo"] = changed_info(out["changedInfo"])
    return out
