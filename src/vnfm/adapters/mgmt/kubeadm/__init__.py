"""The kubeadm cluster management driver (`mgmt-drivers-kubernetes`)."""

from vnfm.adapters.mgmt.kubeadm.driver import KubeadmDriver

__all__ = ["KubeadmDriver"]
