"""Node access on the simulated cloud: what the composition root gives management drivers there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi import server as kube_api_server
from vnfm.adapters.infra.simulator.twin.base import TwinConfig
from vnfm.adapters.infra.simulator.twin.executor import TwinExecutor
from vnfm.service.ports import NodeAccess, NodeHost


class TwinAccess(NodeAccess):
    """Hosts of VNFCs are the simulated cloud's servers; a host with no VNFC (`NodeHost.vnfc_id`
    None) that no simulated server owns is an operator host (twin/operator.py)."""

    def __init__(self, sim: Any, config: TwinConfig | None = None) -> None:
        self.sim = sim
        self.config = config or TwinConfig()
        if self.config.kube_api is None:  # every simulated cluster serves a Kubernetes API
            self.config.kube_api = kube_api_server.shared()

    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> TwinExecutor:
        return TwinExecutor(self.sim, instance_id, self.config, pins=pins,
                            pin_keys={h.address: h.pin_key for h in hosts},
                            operators={h.address for h in hosts if h.vnfc_id is None})
