"""External connection points of an instantiate request (SOL003 ExtVirtualLinkData), as every
infrastructure driver needs them: which external VL and network each CP goes on, with which
fixed addresses."""

from __future__ import annotations

from typing import Any


def ext_cp_map(ext_virtual_links: list[dict[str, Any]]) -> dict[str, tuple[str, str, list[str]]]:
    """cpdId -> (extVirtualLinks[].id, network id (resourceId), fixed addresses asked for)."""
    out: dict[str, tuple[str, str, list[str]]] = {}
    for evl in ext_virtual_links or []:
        evl_id = str(evl.get("id") or evl.get("resourceId") or "")
        network_id = str(evl.get("resourceId") or evl_id)
        for ext_cp in evl.get("extCps") or []:
            cpd_id = ext_cp.get("cpdId")
            if not cpd_id:
                continue
            configs = ext_cp.get("cpConfig") or []
            if isinstance(configs, dict):  # SOL003 v3 uses a map keyed by cpConfigId
                configs = list(configs.values())
            fixed: list[str] = []
            for cfg in configs:
                for proto in (cfg or {}).get("cpProtocolData") or []:
                    ipoe = (proto or {}).get("ipOverEthernet") or {}
                    for ipa in ipoe.get("ipAddresses") or []:
                        fixed.extend(str(a) for a in ipa.get("fixedAddresses") or [])
            out[str(cpd_id)] = (evl_id, network_id, fixed)
    return out
