"""The Kubernetes infrastructure driver: CNFs from the package's manifests on a Kubernetes VIM."""

from vnfm.adapters.infra.kubernetes.driver import KubernetesInfraDriver

__all__ = ["KubernetesInfraDriver"]
