"""Scheduled etcd backups of the clusters vnfm built, each followed by a restore drill.

One task per process (like the certificate watch): every round it claims the instantiated instances
due for a backup (`BackupScheduleStore.claim`: one conditional write per instance moves its
`next_at` a lease on, so one process backs up a given instance per period whatever the number of
processes), and for each whose management driver takes backups (`etcd_backup`) and whose schedule
is on (the instance's `additionalParams.etcd_backup`, else the setting `VNFM_ETCD_BACKUP_INTERVAL`;
0 = off, the default): skipped while an LCM operation holds the instance (tried again after
`busy_retry`), else the driver takes a snapshot on a master, checks it, copies it into the VNFM's
store (at most `keep`), and drills a restore of it; the result (size, keys, digest, the drill's
outcome, or why it failed) is recorded, read by the metrics and `GET /vnfm/v1/vnf_instances/{id}/
backups` (`vnfm vnf show`). Independent instances are backed up in parallel (`parallel` at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from vnfm.domain.errors import VnfmError
from vnfm.domain.model import InstantiationState, Vim, VnfInstance
from vnfm.domain.vnfd import Vnfd
from vnfm.service.ports import LcmContext, NodeAccess, PackageFiles, SnapshotStore

log = logging.getLogger("vnfm.backups")


class BackupScheduleStore(Protocol):
    """The schedule's table (adapters/db/backups.py)."""

    def claim(self, owner: str, now: float, lease: float, limit: int) -> list[str]: ...
    def record(self, inst_id: str, next_at: float, result: dict[str, Any] | None) -> None: ...
    def get(self, inst_id: str) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class BackupPolicy:
    interval: float = 0.0  # the default schedule, seconds between two backups (0: only instances that ask)
    keep: int = 7
    round_every: float = 60.0  # how often a process looks for instances due (0: no schedule task)
    lease: float = 3600.0  # a claimed instance is another process's again after this, if never recorded
    busy_retry: float = 300.0  # an instance an operation holds is tried again after this
    parallel: int = 4
    batch: int = 50


@dataclass(frozen=True)
class Resolvers:
    """What a backup needs besides the instance (the engine's own resolvers)."""

    vnfd_of: Callable[[str], Vnfd]
    files_of: Callable[[str], PackageFiles | None]
    vim_of: Callable[[str | None], Vim | None]
    nodes_of: Callable[[Vim], NodeAccess | None]
    mgmt: Any  # MgmtRegistry: for_hook(flavour, hook)
    store_for: Callable[[int], SnapshotStore]  # the VNFM's store keeping `keep` per instance


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if t else None


class BackupSchedule:
    def __init__(self, store: BackupScheduleStore, get_instance: Callable[[str], VnfInstance | None],
                 res: Resolvers, policy: BackupPolicy, owner: str, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.get_instance = get_instance
        self.res = res
        self.policy = policy
        self.owner = owner
        self.clock = clock
        self.runs = 0  # backups this process attempted (tests)

    async def round(self) -> int:
        """Back up the instances this process claims now; how many it attempted."""
        now = self.clock()
        ids = await asyncio.to_thread(self.store.claim, self.owner, now, self.policy.lease, self.policy.batch)
        gate = asyncio.Semaphore(self.policy.parallel)

        async def one(inst_id: str) -> bool:
            async with gate:
                try:
                    return await self._one(inst_id, now)
                except Exception:  # one instance's trouble never stops the others'
                    log.exception("etcd backup of VNF instance %s failed", inst_id)
                    return False

        done = sum(await asyncio.gather(*(one(i) for i in ids)))
        self.runs += done
        return done

    def _driver_and_ctx(self, inst: VnfInstance) -> tuple[Any, LcmContext, tuple[float, int]] | None:
        """The driver that takes the instance's backups, its context, and the schedule (None: off)."""
        if inst.instantiation_state != InstantiationState.INSTANTIATED or not inst.flavour_id:
            return None
        vnfd = self.res.vnfd_of(inst.vnf_pkg_id)
        flavour = vnfd.flavour(inst.flavour_id)
        driver = self.res.mgmt.for_hook(flavour, "instantiate_end")
        if driver is None or not hasattr(driver, "etcd_backup"):
            return None
        own = driver.backup_schedule(inst)
        interval, keep = own if own is not None else (self.policy.interval, self.policy.keep)
        if interval <= 0:
            return None
        vim = self.res.vim_of(inst.vim_id)
        name = driver.name or type(driver).__name__
        ctx = LcmContext(
            hook="etcd_backup", operation="", op_id=f"backup-{int(self.clock())}", instance=inst, request={},
            additional_params=dict(inst.additional_params), vnfd=vnfd, flavour=flavour,
            package=self.res.files_of(inst.vnf_pkg_id), resources=inst.resources,
            state=copy.deepcopy(inst.driver_state.get(name) or {}),  # read only: never written back
            progress=lambda m: log.info("etcd backup of %s: %s", inst.id, m, extra={"vnf_instance_id": inst.id}),
            nodes=self.res.nodes_of(vim) if vim is not None else None,
            params=driver.declared.parse(inst.additional_params) if driver.declared is not None else None,
            snapshots=self.res.store_for(keep))
        return driver, ctx, (interval, keep)

    async def _one(self, inst_id: str, now: float) -> bool:
        inst = await asyncio.to_thread(self.get_instance, inst_id)
        plan = self._driver_and_ctx(inst) if inst is not None else None
        if inst is None or plan is None:  # off: looked at again next round period
            await asyncio.to_thread(self.store.record, inst_id, now + max(self.policy.round_every, 60.0) * 5, None)
            return False
        if inst.lock_op_id:  # an operation changes the cluster now: not under its feet
            await asyncio.to_thread(self.store.record, inst_id, now + self.policy.busy_retry, None)
            return False
        driver, ctx, (interval, keep) = plan
        started = self.clock()
        try:
            rec = await driver.etcd_backup(ctx, keep)
            result = {"ok": True, **rec}
            drill = rec.get("drill") or {}
            log.info("etcd backup of VNF instance %s: %s bytes, %s keys, drill %s", inst_id, rec.get("size"),
                     rec.get("keys"), "ok" if drill.get("ok") else f"FAILED ({drill.get('reason')})",
                     extra={"vnf_instance_id": inst_id})
        except (VnfmError, OSError, ValueError) as e:
            detail = getattr(e, "detail", None) or str(e)
            result = {"ok": False, "at": started, "reason": detail}
            log.warning("etcd backup of VNF instance %s failed: %s", inst_id, detail,
                        extra={"vnf_instance_id": inst_id})
        result["took"] = round(self.clock() - started, 3)
        result["interval"] = interval
        await asyncio.to_thread(self.store.record, inst_id, now + interval, result)
        return True

    async def run(self, stop: asyncio.Event) -> None:
        """Rounds every `round_every` seconds until `stop` is set."""
        while not stop.is_set():
            try:
                await self.round()
            except Exception:
                log.exception("etcd backup round failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=max(0.05, self.policy.round_every))


def view(inst_id: str, row: dict[str, Any] | None, now: float | None = None) -> dict[str, Any]:
    """The API's and `vnf show`'s account of an instance's backups (row: the schedule's record)."""
    now = time.time() if now is None else now
    if not row or (not row.get("last") and not row.get("last_ok")):
        return {"vnfInstanceId": inst_id, "scheduled": bool(row), "lastBackup": None, "lastDrill": None,
                "nextAt": _iso(row.get("next_at")) if row else None}
    last, ok = row.get("last") or {}, row.get("last_ok") or {}
    drill = (ok.get("drill") or {}) if ok else {}
    out: dict[str, Any] = {
        "vnfInstanceId": inst_id, "scheduled": True, "nextAt": _iso(row.get("next_at")),
        "lastAttempt": {"at": _iso(last.get("at")), "result": "OK" if last.get("ok") else "FAILED",
                        **({"reason": last["reason"]} if last.get("reason") else {})},
        "lastBackup": None, "lastDrill": None,
    }
    if ok:
        out["lastBackup"] = {"at": _iso(ok.get("at")), "ageSeconds": round(now - float(ok["at"]), 1),
                             "sizeBytes": ok.get("size"), "keys": ok.get("keys"), "sha256": ok.get("sha256"),
                             "name": ok.get("name"), "host": ok.get("host")}
    if drill:
        out["lastDrill"] = {"at": _iso(drill.get("at")), "result": "OK" if drill.get("ok") else "FAILED",
                            "keys": drill.get("keys"), **({"reason": drill["reason"]} if drill.get("reason") else {})}
    return out
