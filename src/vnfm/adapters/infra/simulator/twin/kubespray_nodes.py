"""The node side of the Kubespray family on the twin: the run key's line in authorized_keys, the
admin kubeconfig read from a control plane and installed on the external LB (kept as a hash and
its server only: the twin never stores a credential)."""

from __future__ import annotations

import base64
import secrets
from typing import Any

import yaml

from vnfm.adapters.infra.simulator.twin.base import TwinHost, node_on, sha
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.kubespray import AuthorizedKey, InstallKubeconfig, ReadKubeconfig


def authorized_key(tw: TwinHost, host: str, sid: str, step: AuthorizedKey) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        keys = st["hosts"].setdefault(sid, {}).setdefault("authorized_keys", {})
        if keys.get(step.marker) == (step.public_key or None):
            return False
        if step.public_key:
            keys[step.marker] = step.public_key
        else:
            keys.pop(step.marker, None)
        return True

    return StepResult(tw.tx(fn))


def read_kubeconfig(tw: TwinHost, host: str, sid: str, step: ReadKubeconfig) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[str, str]:
        if node_on(st, sid, "master") is None or not st["cluster"].get("initialized"):
            raise StepFailed(host, step, f"{step.path}: no such file (not a control plane)")
        return str(st["cluster"]["ca_pem"]), str(st["cluster"]["endpoint"])

    ca, endpoint = tw.tx(fn)
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "kubernetes-admin@cluster.local",
           "clusters": [{"name": "cluster.local", "cluster": {
               "certificate-authority-data": base64.b64encode(ca.encode()).decode(), "server": f"https://{endpoint}"}}],
           "contexts": [{"name": "kubernetes-admin@cluster.local",
                         "context": {"cluster": "cluster.local", "user": "kubernetes-admin"}}],
           "users": [{"name": "kubernetes-admin", "user": {"client-key-data": secrets.token_urlsafe(48)}}]}
    return StepResult(False, {"kubeconfig": yaml.safe_dump(doc, sort_keys=False)})


def install_kubeconfig(tw: TwinHost, host: str, sid: str, step: InstallKubeconfig) -> StepResult:
    try:
        doc = yaml.safe_load(step.kubeconfig)
        ca = base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    except (yaml.YAMLError, KeyError, IndexError, TypeError, ValueError):
        raise StepFailed(host, step, "the kubeconfig has no cluster CA") from None

    def fn(st: dict[str, Any]) -> bool:
        if ca != st["cluster"].get("ca_pem"):
            raise StepFailed(host, step, "the kubeconfig is not for this cluster (its CA differs)")
        h = st["hosts"].setdefault(sid, {})
        want = {"server": step.server, "ca_sha256": sha(ca), "path": step.path}
        if {k: (h.get("kubeconfig") or {}).get(k) for k in want} == want:
            return False
        h["kubeconfig"] = {**want, "kubectl": True}
        return True

    return StepResult(tw.tx(fn))


HANDLERS: dict[type, Any] = {
    AuthorizedKey: authorized_key,
    ReadKubeconfig: read_kubeconfig,
    InstallKubeconfig: install_kubeconfig,
}
