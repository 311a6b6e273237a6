"""The simulated cloud's node access: a twin of what node steps do to hosts, kept per VNF instance."""

from vnfm.adapters.infra.simulator.twin.access import TwinAccess
from vnfm.adapters.infra.simulator.twin.base import KEY, TwinConfig
from vnfm.adapters.infra.simulator.twin.executor import TwinExecutor
from vnfm.adapters.infra.simulator.twin.view import instance_state, kubernetes_view, view

__all__ = ["KEY", "TwinAccess", "TwinConfig", "TwinExecutor", "instance_state", "kubernetes_view", "view"]
