"""Host-local state on the twin: HAProxy backends, keepalived, /etc/hosts blocks (keyed by server id)."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.hosts import SetHostsEntries
from vnfm.nodesteps.lb import HaproxySetBackends, KeepalivedVip


def haproxy(tw: TwinHost, host: str, sid: str, step: HaproxySetBackends) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        want = {"frontend_port": step.frontend_port,
                "backends": [[b.name, b.addr, b.port] for b in step.backends]}
        cur = h.get("haproxy")
        if cur is not None and {k: cur[k] for k in want} == want:
            return False
        h["haproxy"] = {**want, "reloads": (cur or {}).get("reloads", -1) + 1, "address": host}
        return True

    return StepResult(tw.tx(fn))


def keepalived(tw: TwinHost, host: str, sid: str, step: KeepalivedVip) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        want = {"vip": step.vip, "priority": step.priority, "peers": sorted(step.peers),
                "local_address": step.local_address}
        if h.get("keepalived") == want:
            return False
        h["keepalived"] = want
        return True

    return StepResult(tw.tx(fn))


def hosts_entries(tw: TwinHost, host: str, sid: str, step: SetHostsEntries) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        blocks = h.setdefault("etc_hosts", {})
        want = [[a, list(n)] for a, n in step.entries]
        if blocks.get(step.block) == want or (not want and step.block not in blocks):
            return False
        if want:
            blocks[step.block] = want
        else:
            blocks.pop(step.block, None)
        h["etc_hosts_writes"] = h.get("etc_hosts_writes", 0) + 1
        return True

    return StepResult(tw.tx(fn))


HANDLERS: dict[type, Any] = {
    HaproxySetBackends: haproxy,
    KeepalivedVip: keepalived,
    SetHostsEntries: hosts_entries,
}
