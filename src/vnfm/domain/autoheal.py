"""When an unhealthy VNFC may be healed without an operator: the safety rules of automatic heal
(after Cluster API's MachineHealthCheck: a node unhealthy for a while is replaced, but never when
too many are unhealthy at once, `maxUnhealthy`), plus etcd quorum and a per-cluster rate limit.

Pure: the caller gives what it observed and gets which VNFCs to heal and why the others are not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

# why an unhealthy VNFC was not healed (the metric's `reason` label values)
NOT_YET = "not_unhealthy_long_enough"
TOO_MANY = "too_many_unhealthy"
QUORUM = "etcd_quorum"
BUSY = "operation_in_progress"
RATE = "rate_limited"
DISABLED = "autoheal_disabled"
REFUSED = "heal_refused"
SKIP_REASONS = (TOO_MANY, QUORUM, BUSY, RATE, DISABLED, REFUSED)  # NOT_YET is waiting, not skipping


@dataclass(frozen=True)
class AutohealPolicy:
    after: float = 30.0  # seconds a VNFC stays unhealthy before it is healed
    max_unhealthy_share: float = 0.4  # more than this share of the nodes unhealthy: alarms only
    max_heals: int = 3  # automatic heals per cluster within `window`
    window: float = 3600.0


@dataclass(frozen=True)
class Member:
    """One VNFC of the cluster as the watcher saw it."""

    vnfc_id: str
    role: str  # "master", "worker" or "" (not a cluster node, e.g. a storage server)
    unhealthy_since: datetime | None  # None: healthy


@dataclass
class Decision:
    heal: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # vnfc id -> reason


def decide(members: Sequence[Member], now: datetime, policy: AutohealPolicy, *, busy: bool,
           recent_heals: Sequence[datetime]) -> Decision:
    """Which unhealthy VNFCs to heal now (one request: they are healed together)."""
    d = Decision()
    sick = [m for m in members if m.unhealthy_since is not None]
    if not sick:
        return d
    nodes = [m for m in members if m.role]
    sick_nodes = [m for m in nodes if m.unhealthy_since is not None]
    if nodes and len(sick_nodes) / len(nodes) > policy.max_unhealthy_share + 1e-9:
        return _skip_all(d, sick, TOO_MANY)
    if busy:
        return _skip_all(d, sick, BUSY)
    window_start = now - timedelta(seconds=policy.window)
    budget = policy.max_heals - len([t for t in recent_heals if t >= window_start])
    masters = [m for m in members if m.role == "master"]
    healthy_masters = len([m for m in masters if m.unhealthy_since is None])
    master_taken = False
    for m in sorted(sick, key=lambda m: (m.role != "worker", m.vnfc_id)):
        assert m.unhealthy_since is not None
        if (now - m.unhealthy_since).total_seconds() < policy.after:
            d.skipped[m.vnfc_id] = NOT_YET
        elif m.role == "master" and (master_taken or healthy_masters < len(masters) // 2 + 1):
            d.skipped[m.vnfc_id] = QUORUM  # one master at a time, and only while the others keep quorum
        elif budget <= 0:
            d.skipped[m.vnfc_id] = RATE
        else:
            d.heal.append(m.vnfc_id)
            budget -= 1
            master_taken = master_taken or m.role == "master"
    return d


def _skip_all(d: Decision, sick: Sequence[Member], reason: str) -> Decision:
    for m in sick:
        d.skipped[m.vnfc_id] = reason
    return d


def enabled(vnf_configurable_properties: Mapping[str, object]) -> bool:
    """Tacker's `vnfConfigurableProperties.isAutohealEnabled` (absent: off)."""
    return vnf_configurable_properties.get("isAutohealEnabled") is True
