"""The node-step language: typed, validated, idempotent steps a management driver asks hosts to
carry out, grouped by family (etcd, load balancing, /etc/hosts, storage, registries, the
private-registry VNF's Docker, Kubernetes, kubeadm, Kubespray), and the executor contract. Executors
are adapters: SSH (vnfm.adapters.nodes.ssh) and the simulated cloud's twin
(vnfm.adapters.infra.simulator.twin)."""

from vnfm.nodesteps.base import HostKeyChanged, NodeStep, StepExecutor, StepFailed, StepResult, split_host_port
from vnfm.nodesteps.etcd import (
    EtcdHealth,
    EtcdMemberAdd,
    EtcdMemberList,
    EtcdMemberPromote,
    EtcdMemberRemove,
    EtcdStart,
    EtcdStop,
    EtcdTls,
)
from vnfm.nodesteps.hosts import SetHostsEntries
from vnfm.nodesteps.kubeadm import (
    JoinInfo,
    KubeadmInit,
    KubeadmJoin,
    MoveControlPlaneEndpoint,
    PrepareNode,
)
from vnfm.nodesteps.kubernetes import (
    ApplyPersistentVolume,
    DeleteNode,
    DeletePersistentVolumes,
    DrainNode,
    LabelNode,
    UncordonNode,
    VimToken,
    WaitNodeReady,
    node_name,
)
from vnfm.nodesteps.kubespray import (
    AuthorizedKey,
    InstallKubeconfig,
    InventoryHost,
    KubesprayCheckInventory,
    KubesprayInventory,
    KubesprayPlaybook,
    KubesprayRemoveHost,
    KubesprayRemoveInventory,
    ReadKubeconfig,
)
from vnfm.nodesteps.lb import (
    Backend,
    Frontend,
    HaproxyApplyConfig,
    HaproxySetBackends,
    KeepalivedVip,
    LbFrontends,
    PoolRef,
    ServerPool,
)
from vnfm.nodesteps.registry import (
    ContainerdRegistries,
    NodeRegistryConfig,
    RegistryAuthEntry,
    RegistryClientConfig,
    RegistryServe,
)
from vnfm.nodesteps.registry_vnf import DockerLoadImage, DockerPullImage, InstallDocker, RunRegistryContainer
from vnfm.nodesteps.storage import InstallNfsClient, NfsExport, NfsExports, PrepareVolume

__all__ = [
    "AuthorizedKey",
    "InstallKubeconfig",
    "InventoryHost",
    "KubesprayInventory",
    "KubesprayPlaybook",
    "KubesprayCheckInventory",
    "KubesprayRemoveHost",
    "KubesprayRemoveInventory",
    "ReadKubeconfig",
    "PoolRef",
    "ServerPool",
    "ApplyPersistentVolume",
    "Backend",
    "ContainerdRegistries",
    "DeleteNode",
    "DeletePersistentVolumes",
    "DockerLoadImage",
    "DockerPullImage",
    "DrainNode",
    "EtcdHealth",
    "EtcdMemberAdd",
    "EtcdMemberList",
    "EtcdMemberPromote",
    "EtcdMemberRemove",
    "EtcdStart",
    "EtcdStop",
    "EtcdTls",
    "Frontend",
    "HaproxyApplyConfig",
    "HaproxySetBackends",
    "HostKeyChanged",
    "InstallDocker",
    "InstallNfsClient",
    "JoinInfo",
    "KeepalivedVip",
    "KubeadmInit",
    "KubeadmJoin",
    "MoveControlPlaneEndpoint",
    "LabelNode",
    "LbFrontends",
    "NfsExport",
    "NfsExports",
    "NodeRegistryConfig",
    "NodeStep",
    "PrepareNode",
    "PrepareVolume",
    "RegistryAuthEntry",
    "RegistryClientConfig",
    "RegistryServe",
    "RunRegistryContainer",
    "SetHostsEntries",
    "StepExecutor",
    "StepFailed",
    "StepResult",
    "UncordonNode",
    "VimToken",
    "WaitNodeReady",
    "node_name",
    "split_host_port",
]
