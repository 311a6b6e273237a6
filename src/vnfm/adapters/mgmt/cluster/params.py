"""`additionalParams.k8s_cluster_installation_param` of the kubeadm driver, declared: the seeds'
keys (000 heal, 001 persistent volumes, 003 private registries, 004 scale) plus vnfm extensions
(`doc(..., "ext")`). Each field's type admits only what is valid where its value lands
(domain/params.py); a key the schema does not declare is refused (400, with the nearest known key).

The models keep the names the cluster code reads (`master`, `worker`, `registries`, ...); the
request's keys are their aliases. A scale or heal request's keys override the stored ones one
level deep inside `master_node`, `worker_node`, `proxy`, `storage_server` (`DECLARED.merge_depth`).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import Field, PrivateAttr, ValidationInfo, model_validator

from vnfm.domain.params import (
    AbsPath,
    Cidr,
    ConnectionType,
    CpName,
    Declared,
    DevPath,
    Doc,
    ExportTo,
    HostPort,
    HostsEntry,
    IpAddress,
    KubernetesVersion,
    Login,
    NoProxy,
    PackagePath,
    Params,
    PrivateKey,
    ProxyUrl,
    Seconds,
    Secret,
    Text,
    VnfdId,
    doc,
)

ROOT = "additionalParams.k8s_cluster_installation_param"
KEY = "k8s_cluster_installation_param"
DEFAULT_K8S_VERSION = "1.30.4"
_USER = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$", re.IGNORECASE)
_CP_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,255}$")
SCRIPT_NOT_RUN = "vnfm runs its own typed node steps and never runs package code; the file must exist in the package"


def _login_given(password: str | None, key: str | None, pw_key: str = "password") -> None:
    if password is None and key is None:
        raise ValueError(f"give '{pw_key}' or 'ssh_private_key' for SSH access")


_CIDR_PATHS = {"pod_cidr": "master_node.pod_cidr", "cluster_cidr": "master_node.cluster_cidr",
               "k8s_node_cidr": "proxy.k8s_node_cidr"}


def cidr_warnings(info: ValidationInfo) -> tuple[str, ...]:
    """The CIDRs read as their network (domain/params.check_cidr), by key path."""
    found = (info.context or {}).get("warnings") or ()
    return tuple(f"{ROOT}.{_CIDR_PATHS.get(field, field)}: {why}" for field, why in found)


class NodeParams(Params):
    aspect_id: VnfdId | None = doc("scaling aspect of the VDU (nodes are found by it, or by their CP)", "000-004")
    ssh_cp_name: CpName = doc("CP (or `<VDU>_FloatingIP`, or a BaseHOT resource) whose address vnfm logs in to",
                              "000-004", default=...)
    nic_cp_name: CpName = doc("CP whose address the node uses inside the cluster", "000-004", default="",
                              shown="ssh_cp_name")
    username: Login = doc("SSH login", "000-004", default=...)
    password: Secret | None = doc("SSH password (also used for sudo)", "000-004",
                                  required="one of password, ssh_private_key")
    ssh_private_key: PrivateKey | None = doc("OpenSSH or PEM private key text, instead of the password (alias "
                                             "`private_key`)", alias="ssh_private_key", aliases=("private_key",),
                                             required="one of password, ssh_private_key")

    @model_validator(mode="after")
    def _complete(self) -> NodeParams:
        _login_given(self.password, self.ssh_private_key)
        self.nic_cp_name = self.nic_cp_name or self.ssh_cp_name
        return self


class MasterBase(NodeParams):
    pod_cidr: Cidr = doc("pod network (a `.0` address with host bits, as in the seeds' 192.168.3.0/16, is read "
                         "as its network, with a warning)", "000-004", default="192.168.0.0/16")
    cluster_cidr: Cidr = doc("service network; must not overlap pod_cidr", "000-004", default="10.96.0.0/12")

    @model_validator(mode="after")
    def _networks(self) -> MasterBase:
        pod, svc = ipaddress.ip_network(self.pod_cidr), ipaddress.ip_network(self.cluster_cidr)
        if pod.overlaps(svc):
            raise ValueError(f"cluster_cidr: {svc} overlaps pod_cidr {pod}: the service and pod networks must be "
                             "disjoint")
        if svc.num_addresses < 16:
            raise ValueError(f"cluster_cidr: {svc} is too small for the cluster's services")
        return self


class MasterParams(MasterBase):
    cluster_cp_name: CpName = doc("CP (or BaseHOT VIP port) that carries the API endpoint; HA: the VIP's network",
                                  "000-004", default="", shown="nic_cp_name")
    cluster_vip: IpAddress | None = doc("keepalived VIP of an HA control plane", shown="reserved by the "
                                        "infrastructure driver")

    @model_validator(mode="after")
    def _endpoint(self) -> MasterParams:
        self.cluster_cp_name = self.cluster_cp_name or self.nic_cp_name
        return self


class ProxyBase(Params):
    http_proxy: ProxyUrl | None = doc("http:// or https:// URL", "000-004")
    https_proxy: ProxyUrl | None = doc("http:// or https:// URL", "000-004")
    no_proxy: NoProxy = doc("comma-separated hosts and networks that bypass the proxy", "000-004", default=())

    @property
    def enabled(self) -> bool:
        return bool(self.http_proxy or self.https_proxy)


class ProxyParams(ProxyBase):
    k8s_node_cidr: Cidr | None = doc("the nodes' network, added to no_proxy", "000-004")


class RegistryConnection(Params):
    """One private registry the cluster's nodes pull from (seed 003)."""

    connection_type: ConnectionType = doc("0: HTTP, 1: HTTPS", "003", default=...)
    server: HostPort = doc("the registry as image names reference it", "003", default=...)
    username: Text | None = doc("registry login (with password)", "003")
    password: Secret | None = doc("registry password (with username)", "003")
    certificate_path: PackagePath | None = doc("CA certificate file in the package (HTTPS only)", "003")
    hosts_entry: HostsEntry | None = doc("/etc/hosts entry for the registry", "003", alias="hosts_string")
    _path: str = PrivateAttr("")

    @model_validator(mode="after")
    def _consistent(self) -> RegistryConnection:
        if (self.username is None) != (self.password is None):
            raise ValueError("give both 'username' and 'password' (or neither)")
        if self.certificate_path is not None and not self.https:
            raise ValueError("certificate_path: a CA certificate needs connection_type 1 (HTTPS); connection_type "
                             "0 is plain HTTP")
        return self

    @property
    def https(self) -> bool:
        return self.connection_type == "1"

    @property
    def path(self) -> str:
        return self._path

    @property
    def host(self) -> str:
        h = self.server.rsplit(":", 1)[0] if re.search(r":[0-9]+$", self.server) else self.server
        return h[1:-1] if h.startswith("[") else h


class VolumeSetup(Params):
    volume_resource_id: VnfdId = doc("the VDU's virtual storage id (Heat resource name)", "001", default=...)
    mount_to: AbsPath = doc("where to mount it (not a system directory)", "001", default=...)
    device: DevPath | None = doc("the block device, when /dev/disk/by-id does not show it", shown="found by volume id")


class NfsSetup(Params):
    export_dir: AbsPath = doc("directory to export (not a system directory)", "001", default=...)
    export_to: ExportTo = doc("who may mount it", "001", default=...)


def _unique(items: list[Any], attr: str, path: str) -> None:
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        value = getattr(item, attr)
        if value in seen:
            raise ValueError(f"{path}[{i}].{attr}: {value!r} is also {path}[{seen[value]}].{attr}")
        seen[value] = i


class StorageServerParams(Params):
    ssh_cp_name: CpName = doc("CP of the storage server VDU (not a Kubernetes node)", "001", default=...)
    username: Login = doc("SSH login", "001", default=...)
    password: Secret | None = doc("SSH password", "001", required="one of password, ssh_private_key")
    ssh_private_key: PrivateKey | None = doc("private key text instead of the password",
                                             required="one of password, ssh_private_key")
    volumes: list[VolumeSetup] = doc("volumes to format and mount (at least one)", "001", default=...,
                                     alias="cinder_volume_setup_params")
    exports: list[NfsSetup] = doc("directories to export (at least one)", "001", default=...,
                                  alias="nfs_server_setup_params")

    @model_validator(mode="after")
    def _complete(self) -> StorageServerParams:
        _login_given(self.password, self.ssh_private_key)
        if not self.volumes:
            raise ValueError("cinder_volume_setup_params: at least one volume to mount is required")
        if not self.exports:
            raise ValueError("nfs_server_setup_params: at least one directory to export over NFS is required")
        _unique(self.volumes, "mount_to", "cinder_volume_setup_params")
        _unique(self.exports, "export_dir", "nfs_server_setup_params")
        return self


class PvRegistration(Params):
    pv_manifest_file_path: PackagePath = doc("the PersistentVolume manifest in the package", "001", default=...)
    nfs_server_cp: CpName = doc("CP whose address replaces the manifest's NFS server", "001", default=...)
    _path: str = PrivateAttr("")

    @property
    def path(self) -> str:
        return self._path


class ClusterParams(Params):
    script_path: PackagePath | None = doc("package path of the installation script", "000-004",
                                         inert=SCRIPT_NOT_RUN)
    vim_name: Text | None = doc("name of the Kubernetes VIM registered for the new cluster", "000-004",
                                shown="`kubernetes-<instance id>`")
    master: MasterParams = doc("the control-plane nodes", "000-004", default=..., alias="master_node")
    worker: NodeParams = doc("the worker nodes", "000-004", default=..., alias="worker_node")
    proxy: ProxyParams = doc("HTTP proxy for the nodes (package installs, image pulls)", "000-004",
                             default=ProxyParams())
    kubernetes_version: KubernetesVersion = doc("Kubernetes version to install (1.x.y); a change_vnfpkg upgrades "
                                                "it one minor version up; a scale or heal joins nodes of the "
                                                "control plane's minor only", default=DEFAULT_K8S_VERSION)
    node_ready_timeout: Seconds = doc("how long a joining node may take to become Ready", default=600.0)
    drain_timeout: Seconds = doc("how long a drain before removal or heal may take", default=300.0)
    registries: list[RegistryConnection] = doc("private registries every node pulls from (instantiate, "
                                               "scale-out, heal)", "003", default=[],
                                               alias="private_registry_connection_info")
    storage_server: StorageServerParams | None = doc("the storage server VM that exports NFS", "001",
                                                     required="no (yes with pv_registration_params)")
    pv_registrations: list[PvRegistration] = doc("PersistentVolumes to register", "001", default=[],
                                                 alias="pv_registration_params")
    _warnings: tuple[str, ...] = PrivateAttr(())

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> ClusterParams:
        if self.master.aspect_id is not None and self.master.aspect_id == self.worker.aspect_id:
            raise ValueError(f"worker_node.aspect_id: '{self.worker.aspect_id}' is also master_node.aspect_id; "
                             "masters and workers must scale through different aspects")
        if self.pv_registrations and self.storage_server is None:
            raise ValueError("storage_server: is required when pv_registration_params is given (the NFS server "
                             "the PersistentVolumes point at)")
        _unique(self.registries, "server", "private_registry_connection_info")
        for i, r in enumerate(self.registries):
            r._path = f"{ROOT}.private_registry_connection_info[{i}]"
        for i, p in enumerate(self.pv_registrations):
            p._path = f"{ROOT}.pv_registration_params[{i}]"
        self._warnings = cidr_warnings(info)
        return self

    @property
    def warnings(self) -> tuple[str, ...]:
        return self._warnings


class EtcdBackupParams(Params):
    """A cluster's scheduled etcd backups (service/backups.py): each a snapshot copied into the
    VNFM's store and restored by a drill. Off when the key is absent (and VNFM_ETCD_BACKUP_INTERVAL
    is 0)."""

    interval: Annotated[float, Field(ge=300, le=30 * 86400), Doc("number (s) 300-2592000")] = doc(
        "seconds between two scheduled etcd backups of the cluster (each with a restore drill)", default=...)
    keep: Annotated[int, Field(ge=1, le=20), Doc("integer 1-20")] = doc(
        "how many backups the VNFM's store and the master keep", default=7)


class KubeadmParams(Params):
    """The kubeadm driver's additionalParams keys."""

    cluster: ClusterParams = doc("the cluster's installation parameters", "000-004", default=..., alias=KEY)
    etcd_backup: EtcdBackupParams | None = doc("scheduled etcd backups with restore drills (off when absent)",
                                               required="no")


DECLARED = Declared("kubeadm", KubeadmParams, merge_depth=3)


def parse(additional_params: dict[str, Any] | None) -> ClusterParams:
    """The cluster parameters (normalised); BadRequest naming the key path otherwise."""
    return DECLARED.parse(additional_params).cluster


def override(base: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """The stored parameters with a scale/heal request's over them (DECLARED's merge rule)."""
    return {**base, **DECLARED.merged(base, extra)}
