"""Typed node steps (etcd membership, HAProxy backends, /etc/hosts, NFS exports, registry) and
the executors that carry them out on VNFC hosts."""

from vnfm.nodesteps.render import manifest_yaml, render_nfs_pv_manifest
from vnfm.nodesteps.steps import (
    Backend,
    EtcdHealth,
    EtcdMemberAdd,
    EtcdMemberList,
    EtcdMemberRemove,
    EtcdStart,
    EtcdStop,
    EtcdTls,
    HaproxyApplyConfig,
    HaproxySetBackends,
    NfsExport,
    NodeStep,
    RegistryClientConfig,
    RegistryServe,
    SetHostsEntries,
    StepExecutor,
    StepFailed,
    StepResult,
)

__all__ = [
    "Backend",
    "EtcdHealth",
    "EtcdMemberAdd",
    "EtcdMemberList",
    "EtcdMemberRemove",
    "EtcdStart",
    "EtcdStop",
    "EtcdTls",
    "HaproxyApplyConfig",
    "HaproxySetBackends",
    "NfsExport",
    "NodeStep",
    "RegistryClientConfig",
    "RegistryServe",
    "SetHostsEntries",
    "StepExecutor",
    "StepFailed",
    "StepResult",
    "manifest_yaml",
    "render_nfs_pv_manifest",
]
