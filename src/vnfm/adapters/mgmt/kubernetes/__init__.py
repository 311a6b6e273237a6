"""The Kubernetes cluster management driver (`mgmt-drivers-kubernetes`)."""

from vnfm.adapters.mgmt.kubernetes.driver import KubernetesClusterDriver
from vnfm.adapters.mgmt.kubernetes.twin import TwinConfig, TwinExecutor

__all__ = ["KubernetesClusterDriver", "TwinConfig", "TwinExecutor"]
