"""The Kubespray driver's `additionalParams.k8s_cluster_installation_param`, declared (seed 002):
master_node, worker_node, proxy, vim_name as the shared cluster model has them (without what only
the kubeadm driver acts on: Kubespray configures that itself through its inventory, so those keys
are unknown here and refused), plus `ansible` and `external_lb_param`.

Extensions, all optional: `*.ssh_private_key` (instead of the password), `ansible.mtu` (Kubespray's
calico_mtu), `ansible.playbook_timeout` (seconds per run), `drain_timeout`.

Scale and heal requests may carry `master_node`, `worker_node`, `proxy`, `ansible` and
`external_lb_param` as whole dicts (seed 002: "you need to set values for all keys"): each replaces
the stored one (`DECLARED.merge_depth` 2), so a dict that lacks a required key is refused (400).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pydantic import PrivateAttr, ValidationInfo, model_validator

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.domain.params import (
    AbsPath,
    CpName,
    Declared,
    IpAddress,
    KubernetesVersion,
    Login,
    Mtu,
    PackagePath,
    Params,
    PrivateKey,
    Seconds,
    Secret,
    Text,
    doc,
)

KEY = P.KEY
ROOT = P.ROOT
LB_SCRIPT_NOT_RUN = ("vnfm configures HAProxy and kubectl on the load balancer itself and never runs package "
                     "code; the file must exist in the package")


class AnsibleParams(Params):
    ip_address: IpAddress = doc("its address", "002", default=...)
    username: Login = doc("SSH login", "002", default=...)
    password: Secret | None = doc("SSH password", "002", required="one of password, ssh_private_key")
    ssh_private_key: PrivateKey | None = doc("private key text instead of the password",
                                             required="one of password, ssh_private_key")
    kubespray_root_path: AbsPath = doc("the Kubespray checkout (v2.16 or later: the playbooks at the root up to "
                                       "v2.21, in `playbooks/` since v2.22)", "002", default=...)
    transferring_inventory_path: AbsPath = doc("this cluster's inventory directory (its own, not "
                                               "inventory/sample)", "002", default=...)
    mtu: Mtu | None = doc("the cluster network's MTU (calico_mtu)", shown="Kubespray's")
    playbook_timeout: Seconds = doc("time allowed per playbook run", default=3600.0)

    @model_validator(mode="after")
    def _check(self) -> AnsibleParams:
        P._login_given(self.password, self.ssh_private_key)
        root, inv = self.kubespray_root_path, self.transferring_inventory_path
        if inv in (root, f"{root}/inventory", f"{root}/inventory/sample") or root.startswith(inv + "/"):
            raise ValueError(f"transferring_inventory_path: {inv!r} must be a directory of its own for this "
                             "cluster's inventory (e.g. <kubespray_root_path>/inventory/mycluster), not the "
                             "Kubespray tree, its inventory/ or inventory/sample")
        return self


class ExternalLbParams(Params):
    ssh_cp_name: CpName = doc("its CP (or `<VDU>_FloatingIP`)", "002", default=...)
    ssh_username: Login = doc("SSH login", "002", default=...)
    ssh_password: Secret | None = doc("SSH password", "002", required="one of ssh_password, ssh_private_key")
    ssh_private_key: PrivateKey | None = doc("private key text instead of the password",
                                             required="one of ssh_password, ssh_private_key")
    script_path: PackagePath = doc("the load balancer's configuration script in the package", "002", default=...,
                                   inert=LB_SCRIPT_NOT_RUN)

    @model_validator(mode="after")
    def _check(self) -> ExternalLbParams:
        P._login_given(self.ssh_password, self.ssh_private_key, "ssh_password")
        return self


class KubesprayClusterParams(Params):
    vim_name: Text | None = doc("name of the Kubernetes VIM registered for the new cluster", "002",
                                shown="`kubernetes-<instance id>`")
    master: P.MasterBase = doc("the control-plane nodes (the master aspect scales them one at a time to an odd "
                               "count, 1 -> 3 -> 5)", "002", default=..., alias="master_node")
    worker: P.NodeParams = doc("the worker nodes", "002", default=..., alias="worker_node")
    proxy: P.ProxyBase = doc("HTTP proxy (Kubespray's http_proxy, https_proxy, additional_no_proxy)", "002",
                             default=P.ProxyBase())
    drain_timeout: Seconds = doc("how long a drain before removal or heal may take", default=300.0)
    kubernetes_version: KubernetesVersion | None = doc(
        "Kubernetes version (1.x.y: Kubespray's kube_version); a change_vnfpkg upgrades to the one it names",
        shown="the Kubespray release's default (then not upgradable by change_vnfpkg)")
    node_ready_timeout: Seconds = doc("how long a node may take to be Ready at a new version", default=600.0)
    ansible: AnsibleParams = doc("the Ansible server that runs Kubespray", "002", default=...)
    lb: ExternalLbParams = doc("the external load balancer VM", "002", default=..., alias="external_lb_param")

    @model_validator(mode="after")
    def _aspects(self, info: ValidationInfo) -> KubesprayClusterParams:
        self._warnings = P.cidr_warnings(info)
        if self.master.aspect_id is not None and self.master.aspect_id == self.worker.aspect_id:
            raise ValueError(f"worker_node.aspect_id: '{self.worker.aspect_id}' is also master_node.aspect_id; "
                             "masters and workers must scale through different aspects")
        return self

    @cached_property
    def cluster(self) -> P.ClusterParams:
        """The same cluster seen through the shared model (what the cluster code reads)."""
        m = self.master
        master = P.MasterParams.model_construct(**dict(m), cluster_cp_name=m.nic_cp_name, cluster_vip=None)
        proxy = P.ProxyParams.model_construct(**dict(self.proxy), k8s_node_cidr=None)
        versioned = {"kubernetes_version": self.kubernetes_version} if self.kubernetes_version else {}
        out = P.ClusterParams.model_construct(script_path=None, vim_name=self.vim_name, master=master,
                                              worker=self.worker, proxy=proxy, drain_timeout=self.drain_timeout,
                                              node_ready_timeout=self.node_ready_timeout, **versioned)
        out._warnings = self._warnings
        return out

    _warnings: tuple[str, ...] = PrivateAttr(())


class KubesprayRoot(Params):
    """The Kubespray driver's additionalParams keys."""

    params: KubesprayClusterParams = doc("the cluster's installation parameters", "002", default=..., alias=KEY)
    etcd_backup: P.EtcdBackupParams | None = doc("scheduled etcd backups with restore drills (off when absent)",
                                                 required="no")


DECLARED = Declared("kubespray", KubesprayRoot, merge_depth=2)


# what the hooks read: the shared cluster view (`.cluster`), the Ansible server and the load balancer
KubesprayParams = KubesprayClusterParams


def parse(additional_params: dict[str, Any] | None) -> KubesprayParams:
    """The cluster parameters plus `ansible` and `external_lb_param`; BadRequest naming the key."""
    return DECLARED.parse(additional_params).params


def override(base: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """The stored parameters with a scale/heal request's whole dicts over them (DECLARED's rule)."""
    return {**base, **DECLARED.merged(base, extra)}
