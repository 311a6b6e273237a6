"""vnfm: a standalone ETSI NFV VNF manager for Kubernetes clusters on virtual machines."""

__version__ = "0.1.0"
