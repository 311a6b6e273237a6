"""A control plane's certificates: where each layout keeps them, reading their expiry (notAfter)
and renewing them in place.

Expiry is read from the files themselves with `openssl x509 -enddate` (never from the table
`kubeadm certs check-expiration` prints), so a Kubespray tree, whose etcd certificates kubeadm
does not manage, reads the same way. The layouts, as the installers write them:

kubeadm (`certificatesDir` /etc/kubernetes/pki, kubeconfigs in /etc/kubernetes):
  apiserver.crt, apiserver-kubelet-client.crt, apiserver-etcd-client.crt, front-proxy-client.crt,
  etcd/server.crt, etcd/peer.crt, etcd/healthcheck-client.crt; admin.conf's embedded client
  certificate (`client-certificate-data`); super-admin.conf (kubeadm 1.29+) alike. The CAs
  (ca.crt, etcd/ca.crt, front-proxy-ca.crt) last 10 years and `kubeadm certs renew` does not
  renew them: ca.crt is read and shown, never renewed.
Kubespray (`kube_cert_dir` /etc/kubernetes/ssl, kubeadm-managed; etcd as `etcd_deployment_type:
host`, its default, with Kubespray's own openssl-made certificates in /etc/ssl/etcd/ssl):
  /etc/kubernetes/ssl/{apiserver,apiserver-kubelet-client,front-proxy-client}.crt,
  /etc/ssl/etcd/ssl/member-<node>.pem (the member's server and peer certificate),
  /etc/ssl/etcd/ssl/node-<node>.pem (the API server's etcd client certificate), admin.conf.

Renewal (`CertRenew`): `kubeadm certs renew all` (Kubespray: the same command with its
`--config /etc/kubernetes/kubeadm-config.yaml`, as its own `k8s-certs-renew.sh` does; Kubespray's
etcd certificates are outside kubeadm and are not renewed: they are read and shown). The
control-plane static pods (kube-apiserver, kube-controller-manager, kube-scheduler, etcd) do not
all reload certificates, so they are restarted (their pod sandboxes removed with crictl; the
kubelet recreates them from /etc/kubernetes/manifests; no sandbox found fails the step), then the
step waits, with a deadline, until the local API server answers /readyz with the renewed
admin.conf and serves the renewed certificate (the notAfter `openssl s_client` sees is the file's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_name, _check_path
from vnfm.nodesteps.kubernetes import _check_node

KUBEADM = "kubeadm"
KUBESPRAY = "kubespray"
LAYOUTS = (KUBEADM, KUBESPRAY)
X509, KUBECONFIG = "x509", "kubeconfig"


@dataclass(frozen=True)
class CertFile:
    name: str  # how vnfm names it (the metric's `cert` label)
    path: str
    kind: str = X509  # or KUBECONFIG: the client certificate embedded in a kubeconfig
    optional: bool = False  # absent in some versions (super-admin.conf before kubeadm 1.29)
    renewed: bool = True  # False: `kubeadm certs renew all` leaves it (CAs, Kubespray's etcd)

    def __post_init__(self) -> None:
        _check_name("certificate name", self.name)
        _check_path("certificate path", self.path)
        if self.kind not in (X509, KUBECONFIG):
            raise ValueError(f"certificate kind {self.kind!r} is neither {X509} nor {KUBECONFIG}")


def files(layout: str, node: str) -> tuple[CertFile, ...]:
    """The certificates a control plane `node` of `layout` has (see the module's text)."""
    if layout == KUBEADM:
        pki = "/etc/kubernetes/pki"
        return (
            CertFile("apiserver", f"{pki}/apiserver.crt"),
            CertFile("apiserver-kubelet-client", f"{pki}/apiserver-kubelet-client.crt"),
            CertFile("apiserver-etcd-client", f"{pki}/apiserver-etcd-client.crt"),
            CertFile("front-proxy-client", f"{pki}/front-proxy-client.crt"),
            CertFile("etcd-server", f"{pki}/etcd/server.crt"),
            CertFile("etcd-peer", f"{pki}/etcd/peer.crt"),
            CertFile("etcd-healthcheck-client", f"{pki}/etcd/healthcheck-client.crt"),
            CertFile("admin.conf", "/etc/kubernetes/admin.conf", KUBECONFIG),
            CertFile("super-admin.conf", "/etc/kubernetes/super-admin.conf", KUBECONFIG, optional=True),
            CertFile("ca", f"{pki}/ca.crt", renewed=False),
        )
    if layout == KUBESPRAY:
        ssl, etcd = "/etc/kubernetes/ssl", "/etc/ssl/etcd/ssl"
        return (
            CertFile("apiserver", f"{ssl}/apiserver.crt"),
            CertFile("apiserver-kubelet-client", f"{ssl}/apiserver-kubelet-client.crt"),
            CertFile("front-proxy-client", f"{ssl}/front-proxy-client.crt"),
            CertFile("etcd-member", f"{etcd}/member-{node}.pem", renewed=False),
            CertFile("apiserver-etcd-client", f"{etcd}/node-{node}.pem", renewed=False),
            CertFile("admin.conf", "/etc/kubernetes/admin.conf", KUBECONFIG),
            CertFile("ca", f"{ssl}/ca.crt", renewed=False),
        )
    raise ValueError(f"certificate layout {layout!r} is not one of {', '.join(LAYOUTS)}")


@dataclass(frozen=True)
class _CertStep(NodeStep):
    node: str
    layout: str = KUBEADM

    def __post_init__(self) -> None:
        _check_node(self.node)
        files(self.layout, self.node)  # the layout is known

    @property
    def files(self) -> tuple[CertFile, ...]:
        return files(self.layout, self.node)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class CertExpiry(_CertStep):
    """Read every certificate of the layout on this control plane.
    data: not_after = {name: Unix time}, missing = [names of optional files absent]; a required
    file that is absent or unreadable fails the step, naming it."""

    kind: ClassVar[str] = "k8s-cert-expiry"


@dataclass(frozen=True)
class CertRenew(_CertStep):
    """Renew this control plane's kubeadm-managed certificates and kubeconfigs, restart its
    control-plane static pods and wait (up to `deadline_s`) until its API server answers again.
    data: not_after as CertExpiry's, read after the renewal."""

    kind: ClassVar[str] = "k8s-cert-renew"
    deadline_s: float = 300.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.deadline_s <= 3600:
            raise ValueError("deadline_s must be in (0, 3600]")
