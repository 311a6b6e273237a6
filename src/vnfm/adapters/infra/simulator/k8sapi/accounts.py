"""ServiceAccounts and their long-lived token Secrets, as the token controller keeps them: a Secret
of type `kubernetes.io/service-account-token` naming an existing ServiceAccount (annotation
`kubernetes.io/service-account.name`) gets `data.token`, `data.ca.crt` and `data.namespace`; the
token authenticates to this cluster's API (its sha256 is kept with the twin's ServiceAccount
tokens, under `secret:<namespace>/<name>`) until the Secret or its ServiceAccount is deleted (the
controller then deletes the Secret too).

Not modelled: RBAC. Every token the API accepts may do everything (as a cluster-admin binding
allows); ClusterRoleBindings are stored and shown, not enforced."""

from __future__ import annotations

import base64
import secrets
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.state import objects
from vnfm.adapters.infra.simulator.twin.base import sha

TOKEN_TYPE = "kubernetes.io/service-account-token"  # noqa: S105 - a Secret type, not a password
SA_NAME = "kubernetes.io/service-account.name"
SA_UID = "kubernetes.io/service-account.uid"
PREFIX = "secret:"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def reconcile(st: dict[str, Any], bump: Any) -> bool:
    """Issue tokens to new token Secrets, delete those of deleted ServiceAccounts, revoke the
    tokens of deleted Secrets. True when anything changed."""
    changed = False
    sas, found = objects(st, "serviceaccounts"), objects(st, "secrets")
    for key, s in sorted(found.items()):
        if s.get("type") != TOKEN_TYPE:
            continue
        ns = s["metadata"]["namespace"]
        ann = s["metadata"].setdefault("annotations", {})
        sa = sas.get(f"{ns}/{ann.get(SA_NAME, '')}")
        if sa is None or (ann.get(SA_UID) and ann[SA_UID] != sa["metadata"].get("uid")):
            if (s.get("data") or {}).get("token"):  # issued once, for an account that is gone now
                del found[key]
                changed = True
            continue
        if (s.get("data") or {}).get("token"):
            continue
        token = secrets.token_urlsafe(32)
        ca = str((st.get("cluster") or {}).get("ca_pem") or "")
        s["data"] = {**(s.get("data") or {}), "token": _b64(token), "ca.crt": _b64(ca), "namespace": _b64(ns)}
        ann[SA_UID] = sa["metadata"].get("uid")
        s["metadata"]["resourceVersion"] = bump(st)
        st["service_accounts"][f"{PREFIX}{key}"] = {"token_sha256": sha(token)}
        changed = True
    for ref in [k for k in st["service_accounts"] if k.startswith(PREFIX)]:
        if ref[len(PREFIX):] not in found:
            del st["service_accounts"][ref]
            changed = True
    return changed
