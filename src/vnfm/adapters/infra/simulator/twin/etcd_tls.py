"""The etcd client certificate a step gives, checked on the twin as etcdctl on the host would find it:
a kubeadm control plane has /etc/kubernetes/pki/etcd/ca.crt with the healthcheck-client (or the API
server's apiserver-etcd-client) pair; a Kubespray one (etcd_deployment_type host) /etc/ssl/etcd/ssl/
ca.pem with admin-<node>.pem / admin-<node>-key.pem (or its node-/member- pairs). Another host's
file, or the other layout's, is not there: the step fails as etcdctl does (no such file)."""

from __future__ import annotations

from typing import Any

from vnfm.nodesteps.base import NodeStep, StepFailed
from vnfm.nodesteps.certs import KUBEADM, KUBESPRAY
from vnfm.nodesteps.etcd import EtcdTls


def present(layout: str, node: str) -> tuple[str, set[tuple[str, str]]]:
    """(the CA file, the (cert, key) pairs) a control plane `node` of `layout` has."""
    if layout == KUBESPRAY:
        d = "/etc/ssl/etcd/ssl"
        return f"{d}/ca.pem", {(f"{d}/{k}-{node}.pem", f"{d}/{k}-{node}-key.pem") for k in ("admin", "node", "member")}
    pki = "/etc/kubernetes/pki"
    return f"{pki}/etcd/ca.crt", {(f"{pki}/etcd/healthcheck-client.crt", f"{pki}/etcd/healthcheck-client.key"),
                                  (f"{pki}/apiserver-etcd-client.crt", f"{pki}/apiserver-etcd-client.key")}


def check(host: str, step: NodeStep, st: dict[str, Any], sid: str, node: str, tls: EtcdTls | None) -> None:
    """StepFailed when the files `tls` names are not on this control plane (`node` on server `sid`)."""
    certs = (st["hosts"].get(sid) or {}).get("certs") or {}
    if tls is None or not certs:
        return
    ca, pairs = present(str(certs.get("layout") or KUBEADM), node)
    for f in (tls.cacert, tls.cert, tls.key):
        if f != ca and all(f not in p for p in pairs):
            raise StepFailed(host, step, f"open {f}: no such file or directory")
    if (tls.cert, tls.key) not in pairs:
        raise StepFailed(host, step, f"tls: private key {tls.key} does not match public key {tls.cert}")
