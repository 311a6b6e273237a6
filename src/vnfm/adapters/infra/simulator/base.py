"""What every part of the simulated cloud shares: its store, its configuration, transactions."""

from __future__ import annotations

import contextlib
from typing import Any

from vnfm.adapters.infra.simulator import legacy
from vnfm.adapters.infra.simulator.model import SimConfig
from vnfm.adapters.infra.simulator.store import MemoryStateStore, StateStore
from vnfm.adapters.infra.simulator.tx import Doc, Tx
from vnfm.domain.errors import NotFound


class CloudBase:
    """The simulated cloud's state and configuration; the operations are mixed in (see cloud.py)."""

    def __init__(self, store: StateStore | None = None, config: SimConfig | None = None) -> None:
        self.store: StateStore = store or MemoryStateStore()
        self.config = config or SimConfig()

    def _tx(self) -> contextlib.AbstractContextManager[Tx]:
        return self.store.begin()

    def _read(self) -> contextlib.AbstractContextManager[Tx]:
        return self.store.begin(write=False)

    def state(self) -> dict[str, Any]:
        """A private copy of the whole raw state (reads every record: tests and tools only)."""
        return self.store.read()

    def instance_state(self, instance_id: str) -> dict[str, Any]:
        """A private copy of one instance's records, in the shape of `state()`, with the networks
        they use and the pending faults (reads nothing of other instances)."""
        with self._read() as tx:
            return legacy.instance_state(tx, instance_id)

    @staticmethod
    def _doc(tx: Tx, instance_id: str) -> Doc:
        """The document of an instance that has a deployment (NotFound otherwise)."""
        doc = tx.doc(instance_id)
        if doc is None or doc["deployment"] is None:
            raise NotFound(f"the simulated cloud has no deployment for VNF instance {instance_id}")
        return doc
