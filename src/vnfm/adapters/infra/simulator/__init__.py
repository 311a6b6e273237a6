"""The embedded default VIM: a simulated OpenStack-like cloud and its InfraDriver."""

from vnfm.adapters.infra.simulator.cloud import SimCloud
from vnfm.adapters.infra.simulator.driver import SimulatorInfraDriver
from vnfm.adapters.infra.simulator.model import (
    MGMT_NETWORK_ID,
    PUBLIC_NETWORK_ID,
    ServerBuildError,
    ServerDeleteError,
    SimCloudError,
    SimConfig,
    SimFaults,
)
from vnfm.adapters.infra.simulator.store import MemoryStateStore, StateStore

__all__ = [
    "MGMT_NETWORK_ID",
    "PUBLIC_NETWORK_ID",
    "MemoryStateStore",
    "ServerBuildError",
    "ServerDeleteError",
    "SimCloud",
    "SimCloudError",
    "SimConfig",
    "SimFaults",
    "SimulatorInfraDriver",
    "StateStore",
]
