"""Opt-in automatic heal (`vnfConfigurableProperties.isAutohealEnabled`): after each check of an
instance, the VNFCs the safety rules allow (vnfm.domain.autoheal) are healed through the same
InstanceService.heal an operator's SOL002 request goes through, as one occurrence marked
isAutomaticInvocation, its `cause` naming the alarms it answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from vnfm.domain import autoheal as policy_rules
from vnfm.domain.autoheal import AutohealPolicy, Member
from vnfm.domain.errors import VnfmError
from vnfm.domain.model import OpOcc, VnfInstance, utcnow
from vnfm.service.fm.alarms import AlarmService
from vnfm.service.fm.health import VnfcHealth

log = logging.getLogger("vnfm.health")


class AutoHeal:
    def __init__(self, heal: Callable[..., OpOcc], alarms: AlarmService, policy: AutohealPolicy,
                 telemetry: Any = None) -> None:
        self.heal = heal  # InstanceService.heal (inst_id, body, automatic=True)
        self.alarms = alarms
        self.policy = policy
        self.telemetry = telemetry

    async def __call__(self, inst: VnfInstance, health: dict[str, VnfcHealth], state: dict[str, Any]) -> None:
        since = {k: datetime.fromisoformat(v) for k, v in (state.get("since") or {}).items()}
        sick = [k for k, h in health.items() if h.finding is not None]
        if not sick:
            return
        if not policy_rules.enabled(inst.vnf_configurable_properties):
            self._skipped(state, {k: policy_rules.DISABLED for k in sick})
            return
        now = utcnow()
        recent = [datetime.fromisoformat(t) for t in state.get("heals") or []]
        members = [Member(k, h.role, since.get(k, now) if h.finding is not None else None) for k, h in health.items()]
        d = policy_rules.decide(members, now, self.policy, busy=inst.lock_op_id is not None, recent_heals=recent)
        self._skipped(state, {k: r for k, r in d.skipped.items() if r != policy_rules.NOT_YET})
        if not d.heal:
            return
        alarms = {a.vnfc_id: a.id for a in await asyncio.to_thread(self.alarms.open_for, inst.id)}
        cause = "automatic heal by vnfm: " + ", ".join(
            f"VNFC {v} (alarm {alarms.get(v, 'none')})" for v in d.heal)
        try:
            occ = await asyncio.to_thread(self.heal, inst.id, {"vnfcInstanceId": d.heal, "cause": cause[:1000]},
                                          automatic=True)
        except VnfmError as e:  # e.g. 409: an operation started meanwhile
            log.warning("automatic heal of VNF instance %s (%s) refused: %s", inst.id, ", ".join(d.heal), e)
            self._skipped(state, {k: policy_rules.REFUSED for k in d.heal})
            return
        log.warning("automatic heal of VNF instance %s started: occurrence %s, %s", inst.id, occ.id, cause)
        window_start = now.timestamp() - self.policy.window
        state["heals"] = [t.isoformat() for t in recent if t.timestamp() >= window_start] + \
            [now.isoformat()] * len(d.heal)
        if self.telemetry is not None:
            for v in d.heal:
                self.telemetry.autoheal_started((now - since.get(v, now)).total_seconds())

    def _skipped(self, state: dict[str, Any], reasons: dict[str, str]) -> None:
        """Counted once per VNFC and reason while it stays unhealthy (not at every round)."""
        told = dict(state.get("skipped") or {})
        for vnfc_id, reason in reasons.items():
            if told.get(vnfc_id) != reason and self.telemetry is not None:
                self.telemetry.autoheal_skipped(reason)
            told[vnfc_id] = reason
        state["skipped"] = {k: v for k, v in told.items() if k in (state.get("since") or {})}
