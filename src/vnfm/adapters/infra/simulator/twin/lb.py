"""An external load balancer on the twin: HAProxy's configuration as parts owned by several owners
(LbFrontends): one owner's part changes, the others stay; a port belongs to one owner only."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.lb import LbFrontends


def part(step: LbFrontends) -> dict[str, Any]:
    return {"frontends": [{"name": f.name, "port": f.port, "backends": [[b.name, b.addr, b.port] for b in f.backends],
                           **({"pool": list(f.pool)} if f.pool is not None else {})}
                          for f in step.frontends],
            "pools": [{"name": p.name, "servers": [list(s) for s in p.servers]} for p in step.pools]}


def _missing_pools(owners: dict[str, Any]) -> list[str]:
    """Frontends routing to a pool no owner has, as `haproxy -c` names them (it refuses them)."""
    have = {(o, p["name"]) for o, part_ in owners.items() for p in part_.get("pools") or []}
    return [f"frontend vnfm_{o}_fe_{f['name']}: unable to find required default_backend "
            f"'vnfm_{f['pool'][0]}_pool_{f['pool'][1]}'"
            for o, part_ in sorted(owners.items()) for f in part_.get("frontends") or []
            if f.get("pool") and tuple(f["pool"]) not in have]


def lb_frontends(tw: TwinHost, host: str, sid: str, step: LbFrontends) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, list[int]]:
        h = st["hosts"].setdefault(sid, {})
        lb = h.setdefault("lb", {"owners": {}, "reloads": 0})
        lb["address"] = host
        owners: dict[str, Any] = lb["owners"]
        for owner, other in owners.items():
            taken = {f["port"] for f in other["frontends"]} if owner != step.owner else set()
            clash = sorted(taken & {f.port for f in step.frontends})
            if clash:
                raise StepFailed(host, step, f"haproxy -c: port(s) {clash} already served for owner {owner}; "
                                             "the running configuration is unchanged")
        want = part(step)
        ports = [f.port for f in step.frontends]
        if owners.get(step.owner) == want or (not step.frontends and not step.pools and step.owner not in owners):
            return False, ports
        after = {o: p for o, p in owners.items() if o != step.owner}
        if step.frontends or step.pools:
            after[step.owner] = want
        missing = _missing_pools(after)
        if missing:  # the real script's `haproxy -c` of the whole configuration fails the same way
            raise StepFailed(host, step, f"haproxy -c: {'; '.join(missing)}; the running configuration is unchanged")
        if step.frontends or step.pools:
            owners[step.owner] = want
        else:
            owners.pop(step.owner, None)
        lb["reloads"] += 1
        return True, ports

    changed, ports = tw.tx(fn)
    return StepResult(changed, {"ports": ports})


HANDLERS: dict[type, Any] = {LbFrontends: lb_frontends}
