"""One health watcher per process over the whole fleet (never one task per instance).

Each round (every `interval` seconds, jittered): take or renew the leases of a fair share of the
instantiated instances (vnfm.adapters.db.alarms: exactly one live process holds a given one; a
dead holder's are taken once they expire), check the held ones `batch` at a time, raise and
clear their alarms, and give the automatic heal its say. An instance whose check fails backs
off (doubling, up to 16 rounds); an instance an operation holds is left alone until it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vnfm.domain.alarms import CAUSE_NODE_ABSENT, HEALTH_CAUSES, Alarm
from vnfm.domain.model import InstantiationState, Vim, VnfInstance, utcnow
from vnfm.service.fm.alarms import AlarmService
from vnfm.service.fm.health import HealthCheck, VnfcHealth
from vnfm.service.ports import Condition, UowFactory
from vnfm.service.vims import OWNER_KEY

log = logging.getLogger("vnfm.health")

INSTANTIATED = [Condition("instantiationState", "eq", (InstantiationState.INSTANTIATED.value,))]
# what the lease step need not read of the instances (only their ids)
LIGHT = frozenset({"instantiatedVnfInfo", "vimConnectionInfo", "metadata", "extensions", "vnfConfigurableProperties"})
HOUSEKEEPING = "#housekeeping"  # one process at a time drops stale leases and clears alarms of gone instances
HOUSEKEEPING_ROUNDS = 30

OnChecked = Callable[[VnfInstance, dict[str, VnfcHealth], dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class WatchSettings:
    interval: float = 10.0  # seconds between rounds
    batch: int = 20  # instances checked at once
    jitter: float = 0.2  # +- this share of the interval
    lease_rounds: int = 3  # a lease outlives this many rounds without renewal
    # a node VNFC missing from the cluster's API is alarmed once missing this long (kube-controller-
    # manager's node-monitor-grace-period: what a node's NotReady takes), so a node that joins late
    # or is being replaced is not alarmed at once
    absent_grace: float = 40.0


class HealthWatcher:
    def __init__(self, uow: UowFactory, alarms: AlarmService, check: HealthCheck, owner: str,
                 all_vims: Callable[[], list[Vim]], settings: WatchSettings,
                 on_checked: OnChecked | None = None, telemetry: Any = None) -> None:
        self.uow = uow
        self.alarms = alarms
        self.health = check
        self.owner = owner
        self.all_vims = all_vims  # the VIM registry (read once a round)
        self.settings = settings
        self.on_checked = on_checked  # the automatic heal
        self.telemetry = telemetry
        self.held: list[str] = []
        self._backoff: dict[str, tuple[int, int]] = {}  # instance -> (failures, round to retry at)
        self._round = 0
        self._states: dict[str, dict[str, Any]] = {}  # instance -> its lease's bookkeeping (this round)
        self._alarmed: set[str] = set()  # instances with open alarms (this round)
        self._seen_ok: dict[tuple[str, str], datetime] = {}  # (instance, VNFC) -> last seen healthy
        self._task: asyncio.Task[None] | None = None
        self.rounds = 0
        self.cpu_seconds = 0.0  # process CPU spent in rounds (bench/watch_fleet.py)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="vnfm-health-watcher")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        held, self.held = self.held, []
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self._release, held)

    async def _run(self) -> None:
        while True:
            try:
                await self.run_round()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("health watch round failed")
            s = self.settings
            await asyncio.sleep(s.interval * (1 + random.uniform(-s.jitter, s.jitter)))

    # ------------------------------------------------------------------ one round
    async def run_round(self) -> None:
        cpu = time.process_time()
        self._round += 1
        instances = await asyncio.to_thread(self._lease)
        every = await asyncio.to_thread(self.all_vims)  # once a round, not once an instance
        vims = cluster_vims(every)
        by_id = {v.id: v for v in every}
        due = [i for i in instances if self._backoff.get(i.id, (0, 0))[1] <= self._round]
        sem = asyncio.Semaphore(max(1, self.settings.batch))

        async def one(inst: VnfInstance) -> None:
            async with sem:
                await self._check(inst, vims.get(inst.id), by_id.get(str(inst.vim_id)))

        await asyncio.gather(*(one(i) for i in due))
        self.rounds += 1
        self.cpu_seconds += time.process_time() - cpu

    def _lease(self) -> list[VnfInstance]:
        """Take this round's share (ids read without the instances' bodies), then read those held."""
        ttl = self.settings.interval * (1 + self.settings.jitter) * self.settings.lease_rounds
        now = utcnow()
        with self.uow() as uow:
            ids = sorted(i.id for i in uow.instances.page(INSTANTIATED, None, 10_000_000, LIGHT))
            held = sorted(uow.leases.acquire(self.owner, ids, now, ttl))
            chores = self._round % HOUSEKEEPING_ROUNDS == 1 and \
                HOUSEKEEPING in uow.leases.acquire(self.owner, [HOUSEKEEPING], now, ttl * HOUSEKEEPING_ROUNDS)
            gone = uow.alarms.open_outside(ids) if chores else []
            if chores:
                uow.leases.forget(ids, now)
            uow.commit()
            found = uow.instances.page([Condition("id", "in", tuple(held))], None, len(held) + 1) if held else []
            # what the checks need to know, read once for all held (a healthy instance then costs
            # no further query): their bookkeeping, and which have open alarms
            self._states = uow.leases.states(held)
            self._alarmed = {a.managed_object_id for a in uow.alarms.open_for(held)
                             if a.probable_cause in HEALTH_CAUSES}
        for alarm in gone:  # its instance was terminated or deleted: nothing is unhealthy any more
            self.alarms.record(alarm.managed_object_id, alarm.tenant, {}, causes=None)
        self.held = held
        return [i for i in found if i.vim_id and i.resources.vnfcs]

    def _release(self, ids: list[str]) -> None:
        """Stopping: the leases and this watcher's presence go, the others take over at once."""
        with self.uow() as uow:
            uow.leases.release(self.owner, ids, leaving=True)
            uow.commit()

    async def _check(self, inst: VnfInstance, cluster_vim: Vim | None, vim: Vim | None) -> None:
        if inst.lock_op_id is not None:
            return  # an operation works on it: what it changes is not a fault
        started = utcnow()
        try:
            health = await self.health.check(inst, cluster_vim, vim)
        except Exception as e:
            failures = self._backoff.get(inst.id, (0, 0))[0] + 1
            self._backoff[inst.id] = (failures, self._round + min(16, 2 ** (failures - 1)))
            log.warning("health of VNF instance %s not checked (%d time(s) in a row): %s", inst.id, failures, e)
            return
        self._backoff.pop(inst.id, None)
        state = copy.deepcopy(self._states.get(inst.id) or {})
        before = copy.deepcopy(state)
        since = dict(state.get("since") or {})
        for vnfc_id, h in health.items():
            if h.finding is None:
                since.pop(vnfc_id, None)
            else:
                since.setdefault(vnfc_id, started.isoformat())
        for gone in set(since) - set(health):
            since.pop(gone)
        state["since"] = since
        health = self._grace(health, since, started)
        raised: list[Alarm] = []
        if since or inst.id in self._alarmed:
            raised, _ = await asyncio.to_thread(self.alarms.record, inst.id, inst.tenant,
                                                {k: h.finding for k, h in health.items()})
        for a in raised:  # detection latency: at most the time since the VNFC was last seen healthy
            ok = self._seen_ok.get((inst.id, a.vnfc_id))
            if self.telemetry is not None:
                self.telemetry.alarm_raised(a.perceived_severity.value,
                                            (utcnow() - ok).total_seconds() if ok else None)
        for vnfc_id, h in health.items():
            if h.finding is None:
                self._seen_ok[(inst.id, vnfc_id)] = started
        if self.on_checked is not None:
            await self.on_checked(inst, health, state)
        if state != before:
            await asyncio.to_thread(self._put_state, inst.id, state)

    def _grace(self, health: dict[str, VnfcHealth], since: dict[str, str], now: datetime) -> dict[str, VnfcHealth]:
        """A node found absent is healthy until it has been absent `absent_grace` seconds (the
        alarm and the automatic heal wait; the "since" bookkeeping keeps the first sighting)."""
        out = dict(health)
        for vnfc_id, h in health.items():
            if h.finding is not None and h.finding.probable_cause == CAUSE_NODE_ABSENT and \
                    (now - datetime.fromisoformat(since[vnfc_id])).total_seconds() < self.settings.absent_grace:
                out[vnfc_id] = VnfcHealth(None, h.role)
        return out

    def _put_state(self, instance_id: str, state: dict[str, Any]) -> None:
        with self.uow() as uow:
            if uow.leases.put_state(instance_id, self.owner, state):
                uow.commit()


def cluster_vims(vims: list[Vim]) -> dict[str, Vim]:
    """Instance id -> the Kubernetes VIM that instance (a cluster) registered."""
    return {str(v.extra.get(OWNER_KEY)): v for v in vims if v.vim_type == "kubernetes" and v.extra.get(OWNER_KEY)}
