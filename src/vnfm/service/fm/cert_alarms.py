"""The VNF FM alarms of the clusters' certificates (SOL002/SOL003 Alarm), raised and cleared by the
certificate expiry watch (service/certificates.py) from the dates a cluster driver stored.

One alarm per control-plane VNFC whose certificates expire within the warning threshold:
- `KUBERNETES_CERTIFICATE_EXPIRING`, perceivedSeverity WARNING within `warn_before` of the node's
  first expiry, MAJOR within `major_before` (a week by default: scale and heal are about to fail);
- `KUBERNETES_CERTIFICATE_EXPIRED`, CRITICAL, once one has expired (it replaces the EXPIRING alarm:
  that one is cleared, this one raised).
`faultType` names the node's first certificate to expire, `faultDetails` lists each certificate
within the threshold with its notAfter, `rootCauseFaultyResource` is the VNFC's server. A
renewal moves the dates: the next check clears the alarm (an instance with an open certificate
alarm is checked every tenth of the watch's period).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from vnfm.domain.alarms import CAUSE_CERT_EXPIRED, CAUSE_CERT_EXPIRING, PerceivedSeverity
from vnfm.domain.model import VnfInstance
from vnfm.nodesteps.kubernetes import node_name
from vnfm.service.fm.alarms import Finding

DAY = 86400.0


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def findings(inst: VnfInstance, nodes: Mapping[str, Mapping[str, float]], now: float, warn_before: float,
             major_before: float) -> dict[str, Finding | None]:
    """VNFC id -> its certificate finding (None: nothing within the threshold) for every VNFC of
    `inst` that is a control plane in `nodes` (node name -> certificate -> notAfter). A node no
    VNFC of the instance names is left out (it has no VNFC to carry an alarm)."""
    by_node = {node_name(v.name or v.id): v for v in inst.resources.vnfcs}
    out: dict[str, Finding | None] = {}
    for node, certs in sorted(nodes.items()):
        v = by_node.get(node)
        if v is None:
            continue
        soon = sorted((float(t), c) for c, t in certs.items() if float(t) - now <= warn_before)
        if not soon:
            out[v.id] = None
            continue
        first, name = soon[0]
        handle: dict[str, Any] | None = None
        if v.server_id:
            handle = {"vimConnectionId": inst.vim_id, "resourceId": v.server_id,
                      "vimLevelResourceType": v.resource_type}
        details = tuple(f"node {node}: certificate {c} {'expired' if t <= now else 'expires'} on {_iso(t)}"
                        for t, c in soon)
        if first <= now:
            out[v.id] = Finding(CAUSE_CERT_EXPIRED, details, PerceivedSeverity.CRITICAL, handle, fault_type=name)
        else:
            severity = PerceivedSeverity.MAJOR if first - now <= major_before else PerceivedSeverity.WARNING
            out[v.id] = Finding(CAUSE_CERT_EXPIRING, details, severity, handle, fault_type=name)
    return out
