"""A CNF's part of a cluster's external load balancer, as the NodePort driver records it in its
state (`driver_state["cnf-nodeport"]`): the LB's address and the frontends (name, port, the pool
they route to). The cluster's driver reads it back (`VimRegistry.dependents`) to re-apply every
CNF's part when the LB's VM is replaced."""

from __future__ import annotations

from typing import Any

from vnfm.nodesteps.lb import Frontend, LbFrontends, PoolRef

STATE_KEY = "cnf-nodeport"  # the driver's name: where the engine keeps its state
OWNER_PREFIX = "cnf-"


def owner_of(instance_id: str) -> str:
    return f"{OWNER_PREFIX}{instance_id}"


def record(state: dict[str, Any], lb_address: str, frontends: tuple[Frontend, ...]) -> None:
    state["lb_address"] = lb_address
    state["frontends"] = [{"name": f.name, "port": f.port, "pool": list(f.pool) if f.pool else None}
                          for f in frontends]


def forget(state: dict[str, Any]) -> None:
    for k in ("lb_address", "frontends"):
        state.pop(k, None)


def restore(instance_id: str, state: dict[str, Any], lb_addresses: list[str]) -> LbFrontends | None:
    """The CNF's part on the LB with `lb_addresses` again, when it routes to pools only (a part
    listing nodes cannot be rebuilt without the CNF's cluster view: None, as for another LB's)."""
    fronts = state.get("frontends") or []
    if state.get("lb_address") not in lb_addresses or not fronts or not all(f.get("pool") for f in fronts):
        return None
    return LbFrontends(owner_of(instance_id), tuple(Frontend(str(f["name"]), int(f["port"]), (),
                                                             pool=PoolRef(*f["pool"])) for f in fronts))


def on_lb(state: dict[str, Any], lb_addresses: list[str]) -> bool:
    """The CNF has frontends on the LB with `lb_addresses`."""
    return state.get("lb_address") in lb_addresses and bool(state.get("frontends"))
