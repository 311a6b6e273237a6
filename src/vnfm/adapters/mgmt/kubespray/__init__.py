"""The Kubespray cluster management driver (`mgmt-drivers-kubespray`, seed 002)."""

from vnfm.adapters.mgmt.kubespray.driver import KubesprayDriver

__all__ = ["KubesprayDriver"]
