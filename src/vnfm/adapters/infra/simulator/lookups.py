"""Reads for management-driver twins and views: servers by id or address, extras, snapshots."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from vnfm.adapters.infra.simulator.base import CloudBase
from vnfm.adapters.infra.simulator.snapshot import build_snapshot

T = TypeVar("T")


class LookupOps(CloudBase):
    # ------------------------------------------------------------------ lookups for twins
    def server(self, server_id: str) -> dict[str, Any] | None:
        server = self.store.read()["servers"].get(server_id)
        return server

    def server_by_address(self, address: str) -> dict[str, Any] | None:
        """The server that owns a fixed or floating address (addresses are cloud-unique)."""
        state = self.store.read()
        port_id = None
        for fip in state["floating_ips"].values():
            if fip["floating_ip_address"] == address:
                port_id = fip["port_id"]
        if port_id is None:
            for port in state["ports"].values():
                if any(f["ip_address"] == address for f in port["fixed_ips"]):
                    port_id = port["id"]
        port = state["ports"].get(port_id) if port_id else None
        if port is None or not port["device_id"]:
            return None
        return state["servers"].get(port["device_id"])

    # ------------------------------------------------------------------ extras (twins' state)
    def extras(self, instance_id: str) -> dict[str, Any]:
        """A copy of the instance's extras: change it through `update_extras` / `edit_extras`."""
        return copy.deepcopy(self.store.read()["extras"].get(instance_id) or {})

    def update_extras(self, instance_id: str, fn: Callable[[dict[str, Any]], T]) -> T:
        """Run `fn(extras)` on the instance's mutable extras in one transaction; returns its result.

        Extras are deleted with the deployment (undeploy). Keys are free: management-driver
        twins keep cluster-side state there (nodes, etcd members, HAProxy backends, ...).
        """
        with self._tx() as state:
            extras = state["extras"].setdefault(instance_id, {})
            return fn(extras)

    @contextlib.contextmanager
    def edit_extras(self, instance_id: str) -> Iterator[dict[str, Any]]:
        """`with cloud.edit_extras(iid) as ex: ex["nodes"] = ...` — persisted when the block ends."""
        with self._tx() as state:
            yield state["extras"].setdefault(instance_id, {})

    # ------------------------------------------------------------------ read-only view
    def snapshot(self, instance_id: str | None = None, *, include_extras: bool = False) -> dict[str, Any]:
        """A JSON-ready view of the cloud (or of one instance's part of it)."""
        state = self.store.read()
        return build_snapshot(state, instance_id, include_extras=include_extras)
