"""The Docker private-registry VNF's management driver (`mgmt-drivers-private-registry`, seed 003)."""

from vnfm.adapters.mgmt.private_registry.driver import PrivateRegistryDriver

__all__ = ["PrivateRegistryDriver"]
