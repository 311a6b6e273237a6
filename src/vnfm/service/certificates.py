"""The certificates of the clusters vnfm built: what is known of them (a cluster driver's state
`certificates`, adapters/mgmt/cluster/certs.py), shown in `GET /vnfm/v1/vnf_instances/{id}/
certificates` and `vnfm vnf show`, and the fleet's expiry watch.

The watch is one task per process. Every `interval` seconds it claims the instances due for a
check in the database (`CertificateWatchStore.claim`: one conditional write per instance, so one
process checks a given instance per period, whatever the number of processes) and, for each, from
the dates the driver stored (no node is contacted: the dates change only through vnfm's own
operations, which read them again): records the earliest notAfter of each certificate (the metric
`vnfm_cluster_certificate_expiry_timestamp_seconds`); within `warn_before` of the earliest, logs a
warning (`vnfm.certificates`, structured) and notifies the instance's tenant's subscriptions that
opted into `VnfmCertificateExpiryNotification` (SOL003 has no notification type for it; the SOL002/
SOL003 VNF FM AlarmNotification is the standard carrier: see below), once per expiry date;
raises, escalates and clears the VNF FM alarms of its control planes (service/fm/cert_alarms.py,
through service/fm's AlarmService: /vnffm/v1, AlarmNotification to FM subscribers; an instance
with an open certificate alarm is checked every tenth of the period, so a renewal clears it
soon); within `renew_before` and with automatic renewal on for the instance (its
vnfConfigurableProperties.isCertificateAutoRenewalEnabled, else `auto_renew`), starts the renewal
(a HEAL occurrence with `renew_certificates`), once per expiry date (an instance busy with another
operation is tried again at its next check).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from vnfm.domain.alarms import CERT_CAUSES
from vnfm.domain.certificates import WatchRow, auto_renewal
from vnfm.domain.errors import Conflict, VnfmError
from vnfm.domain.model import InstantiationState, VnfInstance
from vnfm.domain.notifications import CERT_EXPIRY_NOTIFICATION, LCM
from vnfm.service.fm import cert_alarms
from vnfm.service.fm.alarms import Finding

log = logging.getLogger("vnfm.certificates")


class CertificateWatchStore(Protocol):
    """The certificate expiry watch's table (adapters/db/certificates.py)."""

    def claim(self, owner: str, now: float, every: float, limit: int = 100) -> list[WatchRow]: ...
    def record(self, inst_id: str, certs: Mapping[str, float], *, warned_for: float | None = None,
               renew_for: float | None = None, next_check: float | None = None) -> None: ...


DAY = 86400.0
KEY = "certificates"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def known(inst: VnfInstance) -> dict[str, Any] | None:
    """The certificates a management driver of the instance recorded (the first that did)."""
    for state in inst.driver_state.values():
        certs = state.get(KEY) if isinstance(state, dict) else None
        if isinstance(certs, dict) and (certs.get("nodes") or certs.get("errors")):
            return certs
    return None


def earliest(certs: Mapping[str, Any]) -> dict[str, float]:
    """Each certificate's earliest notAfter over the control planes."""
    out: dict[str, float] = {}
    for node_certs in (certs.get("nodes") or {}).values():
        for name, t in node_certs.items():
            out[name] = min(float(t), out.get(name, float("inf")))
    return out


def view(inst: VnfInstance, now: float | None = None) -> dict[str, Any]:
    """The API's and `vnf show`'s account of an instance's certificates."""
    certs = known(inst)
    if certs is None:
        why = ("the instance is not instantiated" if inst.instantiation_state != InstantiationState.INSTANTIATED
               else "no management driver of this VNF records certificates")
        return {"vnfInstanceId": inst.id, "known": False, "reason": why}
    now = time.time() if now is None else now
    first = min(((t, n, c) for n, cs in certs["nodes"].items() for c, t in cs.items()), default=None)
    out: dict[str, Any] = {
        "vnfInstanceId": inst.id, "known": True, "layout": certs.get("layout"),
        "checkedAt": _iso(certs["checked_at"]) if certs.get("checked_at") else None,
        "nodes": [{"node": n, "certificates": [{"name": c, "notAfter": _iso(t)} for c, t in sorted(cs.items())]}
                  for n, cs in sorted(certs["nodes"].items())],
    }
    if certs.get("renewed_at"):
        out["renewedAt"] = _iso(certs["renewed_at"])
    if certs.get("errors"):  # control planes whose certificates could not be read, and why
        out["unreadable"] = [{"node": n, "reason": why} for n, why in sorted(certs["errors"].items())]
    if first is not None:
        out["earliest"] = {"node": first[1], "name": first[2], "notAfter": _iso(first[0]),
                           "daysLeft": round((first[0] - now) / DAY, 2)}
    return out


@dataclass(frozen=True)
class WatchPolicy:
    interval: float = 3600.0  # seconds between two checks of an instance (0: no watch)
    warn_before: float = 45 * DAY
    renew_before: float = 30 * DAY
    auto_renew: bool = False  # the default of instances that do not set isCertificateAutoRenewalEnabled
    batch: int = 100  # instances claimed per round
    major_before: float = 7 * DAY  # a certificate alarm is MAJOR from here on (WARNING before)


AlarmSink = Callable[[VnfInstance, dict[str, Finding | None]], Any]


class CertificateWatch:
    def __init__(self, store: CertificateWatchStore, get_instance: Callable[[str], VnfInstance | None],
                 notify: Callable[[VnfInstance, dict[str, Any]], None], renew: Callable[[str], Any],
                 policy: WatchPolicy, owner: str, clock: Callable[[], float] = time.time,
                 alarm: AlarmSink | None = None) -> None:
        self.alarm = alarm  # raises / clears the certificate alarms of an instance (AlarmService.record)
        self.store = store
        self.get_instance = get_instance
        self.notify = notify
        self.renew = renew
        self.policy = policy
        self.owner = owner
        self.clock = clock
        self.checks = 0  # instances checked by this process (tests)

    def round(self) -> int:
        """Check the instances this process claims now; how many it checked."""
        now = self.clock()
        rows = self.store.claim(self.owner, now, self.policy.interval or 3600.0, self.policy.batch)
        for row in rows:
            try:
                self._check(row.instance_id, row.warned_for, row.renew_for, now)
            except Exception:  # one instance's trouble never stops the watch of the others
                log.exception("certificate check of VNF instance %s failed", row.instance_id)
        self.checks += len(rows)
        return len(rows)

    def _check(self, inst_id: str, warned_for: float | None, renew_for: float | None, now: float) -> None:
        inst = self.get_instance(inst_id)
        certs = known(inst) if inst is not None else None
        if inst is None or certs is None:
            return
        per_cert = earliest(certs)
        alarmed = self._alarms(inst, certs, now)
        if not per_cert:
            log.warning("certificates of VNF instance %s: none could be read (%s)", inst_id,
                        "; ".join(f"{n}: {e}" for n, e in sorted((certs.get("errors") or {}).items())),
                        extra={"vnf_instance_id": inst_id})
            self.store.record(inst_id, {})
            return
        first_name, first = min(per_cert.items(), key=lambda kv: kv[1])
        warned = renewing = None
        auto = auto_renewal(inst.vnf_configurable_properties, self.policy.auto_renew)
        if first - now <= self.policy.warn_before and warned_for != first:
            self._warn(inst, per_cert, first_name, first, now, auto)
            warned = first
        if auto and first - now <= self.policy.renew_before and renew_for != first:
            try:
                occ = self.renew(inst_id)
                renewing = first
                op_id = str(getattr(occ, "id", ""))
                log.warning("certificate renewal of VNF instance %s started (occurrence %s)", inst_id, op_id,
                            extra={"vnf_instance_id": inst_id, "op_id": op_id})
            except Conflict as e:  # another operation holds the instance: tried at the next check
                log.info("certificate renewal of VNF instance %s not started now: %s", inst_id, e.detail)
            except VnfmError as e:
                log.warning("certificate renewal of VNF instance %s refused: %s", inst_id, e.detail)
        soon = now + max(0.05, (self.policy.interval or 3600.0) / 10) if alarmed else None
        self.store.record(inst_id, per_cert, warned_for=warned, renew_for=renewing, next_check=soon)

    def _alarms(self, inst: VnfInstance, certs: Mapping[str, Any], now: float) -> bool:
        """Raise, escalate or clear the instance's certificate alarms; whether one stays open."""
        if self.alarm is None:
            return False
        found = cert_alarms.findings(inst, certs.get("nodes") or {}, now, self.policy.warn_before,
                                     self.policy.major_before)
        self.alarm(inst, found)
        return any(f is not None for f in found.values())

    def _warn(self, inst: VnfInstance, per_cert: Mapping[str, float], name: str, first: float, now: float,
              auto: bool) -> None:
        soon = sorted((t, c) for c, t in per_cert.items() if t - now <= self.policy.warn_before)
        days = round((first - now) / DAY, 2)
        log.warning("certificates of VNF instance %s expire soon: %s on %s (%.2f days)", inst.id, name, _iso(first),
                    days, extra={"vnf_instance_id": inst.id, "certificate": name, "not_after": _iso(first),
                                 "days_left": days, "auto_renew": auto})
        self.notify(inst, {
            "id": str(uuid.uuid4()),
            "notificationType": CERT_EXPIRY_NOTIFICATION,
            "timeStamp": _iso(now),
            "vnfInstanceId": inst.id,
            "earliestNotAfter": _iso(first),
            "daysLeft": days,
            "certificates": [{"name": c, "notAfter": _iso(t)} for t, c in soon],
            "autoRenewal": auto,
            "renewBeforeDays": round(self.policy.renew_before / DAY, 2),
            "_links": {"vnfInstance": {"href": f"{LCM}/vnf_instances/{inst.id}"},
                       "certificates": {"href": f"/vnfm/v1/vnf_instances/{inst.id}/certificates"}},
        })

    async def run(self, stop: asyncio.Event) -> None:
        """Rounds every interval / 10 (so an instance is checked within 10% of its period) until
        `stop` is set."""
        pause = max(0.05, (self.policy.interval or 3600.0) / 10)
        while not stop.is_set():
            try:
                await asyncio.to_thread(self.round)
            except Exception:
                log.exception("certificate watch round failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=pause)


def build_watch(uow: Any, notifier: Any, instances: Any, store: CertificateWatchStore, policy: WatchPolicy,
                owner: str) -> CertificateWatch:
    """The watch over the services: instances read without a caller (every tenant's), the warning
    staged in the outbox for the instance's tenant, the alarms through service/fm's AlarmService
    (only the certificate causes: the health watcher's alarms are its own), renewal as a HEAL request."""
    from vnfm.service.fm.alarms import AlarmService  # noqa: PLC0415 - only the composition root calls this
    from vnfm.service.notifications import Notifications  # noqa: PLC0415

    notes = Notifications(notifier, owner)
    alarms = AlarmService(uow, notifier, owner)

    def alarm(inst: VnfInstance, found: dict[str, Finding | None]) -> None:
        alarms.record(inst.id, inst.tenant, found, CERT_CAUSES, replace=True)

    def get_instance(inst_id: str) -> VnfInstance | None:
        with uow() as u:
            return u.instances.get(inst_id)

    def notify(inst: VnfInstance, body: dict[str, Any]) -> None:
        with uow() as u:
            notes.stage(u, body, tenant=inst.tenant)
            u.commit()
        notes.wake()

    def renew(inst_id: str) -> Any:
        return instances.heal(inst_id, {"additionalParams": {"renew_certificates": True}})

    return CertificateWatch(store, get_instance, notify, renew, policy, owner, alarm=alarm)
