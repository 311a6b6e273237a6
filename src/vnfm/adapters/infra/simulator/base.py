"""What every part of the simulated cloud shares: its store, its configuration, transactions."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from vnfm.adapters.infra.simulator.model import SimConfig
from vnfm.adapters.infra.simulator.store import MemoryStateStore, StateStore
from vnfm.domain.errors import NotFound


class CloudBase:
    """The simulated cloud's state and configuration; the operations are mixed in (see cloud.py)."""

    def __init__(self, store: StateStore | None = None, config: SimConfig | None = None) -> None:
        self.store: StateStore = store or MemoryStateStore()
        self.config = config or SimConfig()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[dict[str, Any]]:
        with self.store.transaction() as state:
            yield state

    def state(self) -> dict[str, Any]:
        """A private deep copy of the whole raw state."""
        return self.store.read()

    @staticmethod
    def _deployment(state: dict[str, Any], instance_id: str) -> dict[str, Any]:
        dep = state["deployments"].get(instance_id)
        if dep is None:
            raise NotFound(f"the simulated cloud has no deployment for VNF instance {instance_id}")
        return dep
