"""Fault injection: failed builds and deletes, servers that stop answering SSH."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vnfm.adapters.infra.simulator.base import CloudBase
from vnfm.adapters.infra.simulator.model import SimFaults
from vnfm.adapters.infra.simulator.tx import Tx
from vnfm.domain.errors import Conflict, NotFound


class FaultOps(CloudBase):
    def inject(
        self,
        faults: SimFaults | None = None,
        *,
        fail_build: dict[str, int] | None = None,
        build_message: str | None = None,
        unreachable: Iterable[str] = (),
        unreachable_next: dict[str, int] | None = None,
        fail_delete: int = 0,
        stopped: Iterable[str] = (),
    ) -> SimFaults:
        """Add faults (stored in the state: another process, e.g. the CLI, may inject them).

        `unreachable` takes server ids, VNFC ids or server names and applies at once; the other
        faults wait for the next builds / deletes. Returns the pending faults.
        """
        f = faults or SimFaults()
        builds = _added(f.fail_build, fail_build)
        nexts = _added(f.unreachable_next, unreachable_next)
        targets = [*f.unreachable, *unreachable]
        with self._tx() as tx:
            for target in targets:
                find_server(tx, target)["ssh_reachable"] = False
            for target in [*f.stopped, *stopped]:  # the VM died: the VIM reports it SHUTOFF
                server = find_server(tx, target)
                server["status"], server["ssh_reachable"] = "SHUTOFF", False
            pending = tx.faults()
            pb = pending.setdefault("fail_build", {})
            for vdu, n in builds.items():
                pb[vdu] = pb.get(vdu, 0) + n
            if build_message or f.build_message:
                pending["build_message"] = build_message or f.build_message
            pn = pending.setdefault("unreachable_next", {})
            for vdu, n in nexts.items():
                pn[vdu] = pn.get(vdu, 0) + n
            pending["fail_delete"] = int(pending.get("fail_delete") or 0) + fail_delete + f.fail_delete
            return SimFaults.from_dict(pending)

    def faults(self) -> SimFaults:
        """The faults still pending."""
        with self._read() as tx:
            return SimFaults.from_dict(tx.faults())

    def clear_faults(self) -> None:
        """Drop every pending fault and make every server reachable again."""
        with self._tx() as tx:
            tx.set_faults({})
            for iid in tx.unreachable_instances():
                doc = tx.doc(iid)
                for server in (doc or {}).get("servers", {}).values():
                    server["ssh_reachable"] = True

    def set_reachable(self, target: str, reachable: bool = True) -> dict[str, Any]:
        """Make one server (id, VNFC id or name) answer SSH again, or stop answering."""
        with self._tx() as tx:
            server = find_server(tx, target)
            server["ssh_reachable"] = reachable
            return tx.hand_out(server)


def _added(base: dict[str, int], more: dict[str, int] | None) -> dict[str, int]:
    out = dict(base)
    for vdu, n in (more or {}).items():
        out[vdu] = out.get(vdu, 0) + n
    return out


def find_server(tx: Tx, target: str) -> dict[str, Any]:
    """The server named by a server id, a VNFC id or a server name (the name must be unique)."""
    matches = tx.find_servers(target)
    if len(matches) == 1:
        server_id, instance_id = matches[0]
        doc = tx.doc(instance_id)
        assert doc is not None, f"server index names instance {instance_id}, which has no document"
        return doc["servers"][server_id]
    if not matches:
        raise NotFound(f"no simulated server with id, VNFC id or name '{target}'")
    raise Conflict(f"'{target}' names {len(matches)} simulated servers; use a server id")
