"""Reads for management-driver twins and views: servers by id or address, extras, snapshots."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

from vnfm.adapters.infra.simulator import legacy
from vnfm.adapters.infra.simulator.base import CloudBase
from vnfm.adapters.infra.simulator.snapshot import build_snapshot
from vnfm.adapters.infra.simulator.tx import Tx, private

T = TypeVar("T")


class HostBrief(NamedTuple):
    """What a node step's host check needs of the server behind an address (immutable values)."""

    server_id: str
    name: str
    status: str
    ssh_reachable: bool
    host_key: str


def _server_at(tx: Tx, address: str) -> dict[str, Any] | None:
    """The (shared, read-only) record of the server that owns a fixed or floating address."""
    owner = tx.address_owner(address)
    if owner is None or owner[1] not in ("port", "floating"):
        return None
    instance_id, _, port_id = owner
    doc = tx.view(instance_id)
    port = doc["ports"].get(port_id) if doc else None
    if doc is None or port is None or not port["device_id"]:
        return None
    server: dict[str, Any] | None = doc["servers"].get(port["device_id"])
    return server


class LookupOps(CloudBase):
    # ------------------------------------------------------------------ lookups for twins
    def server(self, server_id: str) -> dict[str, Any] | None:
        """A copy of the server's record (None: no such server)."""
        return self.servers([server_id])[server_id]

    def servers(self, server_ids: list[str]) -> dict[str, dict[str, Any] | None]:
        """`server` of several, in one read."""
        with self._read() as tx:
            out: dict[str, dict[str, Any] | None] = {}
            for sid in server_ids:
                home = tx.server_home(sid)
                doc = tx.view(home) if home is not None else None
                out[sid] = doc["servers"].get(sid) if doc else None
            return private(out)

    def server_by_address(self, address: str) -> dict[str, Any] | None:
        """A copy of the record of the server that owns a fixed or floating address (addresses
        are cloud-unique): one look-up in the address index and a view of the owner's document."""
        with self._read() as tx:
            server = _server_at(tx, address)
            return private(server) if server is not None else None

    def host_brief(self, address: str) -> HostBrief | None:
        """`server_by_address` reduced to what a host check reads: no copy of the record."""
        return self.host_briefs([address])[address]

    def host_briefs(self, addresses: list[str]) -> dict[str, HostBrief | None]:
        """`host_brief` of several addresses, in one read."""
        out: dict[str, HostBrief | None] = {}
        with self._read() as tx:
            for address in addresses:
                s = _server_at(tx, address)
                out[address] = None if s is None else HostBrief(
                    s["id"], s["name"], s.get("status") or "", bool(s.get("ssh_reachable", True)),
                    str(s["host_key"]["public_key"]))
        return out

    # ------------------------------------------------------------------ extras (twins' state)
    def extras(self, instance_id: str) -> dict[str, Any]:
        """A copy of the instance's extras: change it through `update_extras` / `edit_extras`."""
        with self._read() as tx:
            extras = tx.extras(instance_id) or {}
            return private(extras) if tx.writable else extras  # joined a write: not the live record

    def peek_extras(self, instance_id: str, fn: Callable[[dict[str, Any]], T]) -> T:
        """`fn(extras)` on the instance's extras as stored, in one read; joined to an open write,
        on the live record, without the copy `extras` makes there: `fn` changes nothing and
        copies what it returns of them."""
        with self._read() as tx:
            return fn(tx.extras(instance_id) or {})

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction for the calls made in the block (they join it): all or nothing,
        one commit. Nothing in the block may await (the store's lock is held)."""
        with self._tx():
            yield

    def update_extras(self, instance_id: str, fn: Callable[[dict[str, Any]], T]) -> T:
        """Run `fn(extras)` on the instance's mutable extras in one transaction; returns its result.

        Extras are deleted with the deployment (undeploy). Keys are free: management-driver
        twins keep cluster-side state there (nodes, etcd members, HAProxy backends, ...).
        """
        with self._tx() as tx:
            extras = tx.extras(instance_id, create=True)
            assert extras is not None
            return fn(extras)

    @contextlib.contextmanager
    def edit_extras(self, instance_id: str) -> Iterator[dict[str, Any]]:
        """`with cloud.edit_extras(iid) as ex: ex["nodes"] = ...` — persisted when the block ends."""
        with self._tx() as tx:
            extras = tx.extras(instance_id, create=True)
            assert extras is not None
            yield extras

    # ------------------------------------------------------------------ read-only view
    def snapshot(self, instance_id: str | None = None, *, include_extras: bool = False) -> dict[str, Any]:
        """A JSON-ready view of the cloud, or of one instance's part of it (which reads nothing of
        the other instances)."""
        if instance_id is None:
            state = self.store.read()
        else:
            with self._read() as tx:
                state = legacy.instance_state(tx, instance_id, extras=include_extras)
        return build_snapshot(state, instance_id, include_extras=include_extras)
