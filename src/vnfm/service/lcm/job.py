"""A job (one occurrence being run, with everything its operation reads) and the one path through
which runners write occurrences and instances (`JobStore`)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import datetime
import enum
import logging
import pickle
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from vnfm.domain import lcm
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import OpOcc, OpState, Vim, VnfInstance, utcnow
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.domain.secrets import scrub, secret_values
from vnfm.domain.vnfd import Flavour, Vnfd
from vnfm.service import views
from vnfm.service.lcm.patience import Patience
from vnfm.service.notifications import Notifications
from vnfm.service.ports import AbstractUnitOfWork, InfraContext, InfraDriver, PackageFiles, UowFactory

log = logging.getLogger(__name__)

# The notificationStatus of an occurrence's state: START while it runs, RESULT once it stopped.
START_STATES = {OpState.STARTING: "START", OpState.PROCESSING: "START", OpState.ROLLING_BACK: "START"}
FINAL_STATES = (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK)
KEPT_EVENTS = 200  # the progress log keeps this many newest lines
# Live progress is written within this many seconds of its line: a line waits this long for a
# checkpoint to carry it, then one flush writes every line still waiting (issue 24 item 4: with
# a fast cloud nearly every line was a write of its own).
PROGRESS_FLUSH_S = 0.25
_T = TypeVar("_T")
_IMMUTABLE = (str, int, float, enum.Enum, datetime.datetime, datetime.date, type(None))


# Lists whose items are never changed once appended (the progress log: `JobStore.progress` and
# the API's warnings append new dicts; readers copy): a snapshot copies the list, not its items.
_APPEND_ONLY = frozenset({"events"})


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def snapshot(value: _T, since: _T | None = None) -> _T:
    """A copy of an occurrence or instance (a dataclass of plain data) that changes to `value`
    never reach, as `copy.deepcopy` makes it but cheaper (each write of a job copies its
    occurrence; issue 24 item 4): immutable field values (strings, numbers, enum members,
    datetimes) are shared; an append-only list (`_APPEND_ONLY`) is copied, its items shared; a
    container equal to the one in `since` (an earlier snapshot of it: snapshots are never
    changed) is shared with it; the other containers are copied together in one pickle round
    trip (C code; shared references among them stay shared). Only this process's own objects go
    through it."""
    clone = copy.copy(value)
    nested: dict[str, Any] = {}
    for name in _fields(type(value)):
        v = getattr(value, name)
        if isinstance(v, _IMMUTABLE):
            continue
        if name in _APPEND_ONLY and type(v) is list:
            setattr(clone, name, list(v))
        elif since is not None and (old := getattr(since, name)) == v:
            setattr(clone, name, old)
        else:
            nested[name] = v
    if nested:
        copied = pickle.loads(pickle.dumps(nested, pickle.HIGHEST_PROTOCOL))  # noqa: S301 (our own bytes)
        for name, v in copied.items():
            setattr(clone, name, v)
    return clone


@dataclass
class JobWriter:
    """The write state of one job: its writes run one at a time (`lock`, FIFO) in worker threads,
    each from a snapshot taken when it starts, so a later write always carries everything an
    earlier one did. `dirty`: progress lines not yet written; `timer`: the flush due for them
    (cancelled by a write that carried them); `flush`: the task writing them. `owed`: a checkpoint
    recorded in memory only (`JobStore.owe`): the next write, of whatever kind, carries it, the
    instance included; `notices`: notifications of state moves not yet written (with it too)."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    dirty: bool = False
    owed: bool = False
    notices: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    flush: asyncio.Task[None] | None = None
    lost: OwnershipLost | None = None
    loop: asyncio.AbstractEventLoop | None = None
    saved_inst: VnfInstance | None = None  # as last read or written: an unchanged one is not written
    # The occurrence as this runner last read or wrote it (None: unknown): the next write sends
    # only what differs from it (`save_changes`).
    saved_occ: OpOcc | None = None
    # Monotonic time at which the last write that succeeded was sent: a fenced write proves, as a
    # fencing read does, that the occurrence was still this runner's then (`fence.Fence` reuses it).
    owned_at: float = -1e18


class OwnershipLost(Exception):
    """The occurrence has another owner (or epoch) than the runner started with: another process
    took it over while this one was paused, or it was retried since. The runner stops and writes
    nothing more."""


@dataclass
class Job:
    """One occurrence being run: the occurrence, its instance and what they refer to."""

    occ: OpOcc
    inst: VnfInstance
    vnfd: Vnfd
    flavour: Flavour | None
    package: PackageFiles | None
    vim: Vim | None
    infra: InfraDriver | None
    secrets: set[str] = field(default_factory=set)
    current_stage: str = ""
    # The owner and epoch the occurrence had when this runner loaded it: its writes require them.
    fence: tuple[str | None, int] = (None, 0)
    # Wraps the ports of its side effects (node access, VIM registry) in the fencing check
    # (`fence.py`); the engine sets it when it runs the job, `infra` is wrapped then too.
    edge: Callable[[Any], Any] | None = field(default=None, repr=False, compare=False)
    writer: JobWriter = field(default_factory=lambda: JobWriter(), repr=False, compare=False)

    @property
    def plan(self) -> dict[str, Any]:
        return self.occ.plan

    def done(self, stage: str) -> bool:
        return stage in self.plan.setdefault("done", [])

    def rb_done(self, stage: str) -> bool:
        return stage in self.plan.setdefault("rb_done", [])

    @property
    def vim_gone(self) -> bool:
        """The instance names a VIM that is no longer registered (a CNF whose cluster was terminated)."""
        return self.vim is None and bool(self.inst.vim_id)

    def require_infra(self) -> InfraDriver:
        if self.infra is None:
            vt = self.vim.vim_type if self.vim else "none"
            raise OperationFailed(f"no infrastructure driver for VIM type '{vt}'")
        return self.infra

    def infra_context(self, progress: Callable[[str], None]) -> InfraContext:
        if self.flavour is None or self.vim is None:
            raise OperationFailed("the instance has no flavour or VIM")
        return InfraContext(
            instance_id=self.inst.id,
            op_id=self.occ.id,
            vnfd=self.vnfd,
            flavour=self.flavour,
            package=self.package,
            vim=self.vim,
            ext_virtual_links=self.inst.ext_virtual_links,
            additional_params=self.inst.additional_params,
            resources=self.inst.resources,
            progress=progress,
            operation_params=dict(self.occ.operation_params or {}),
        )


def plan_vnfcs(stored: Iterable[dict[str, Any]]) -> list[Vnfc]:
    """VNFCs the plan stored as dicts (decided once when the request arrived)."""
    return list(VnfResources.from_dict({"vnfcs": list(stored)}).vnfcs)


def load_job(
    uow: UowFactory,
    op_id: str,
    *,
    vnfd_of: Callable[[str], Vnfd],
    files_of: Callable[[str], PackageFiles | None],
    vim_of: Callable[[str | None], Vim | None],
    infra_drivers: Mapping[str, InfraDriver],
    vim_in: Callable[[AbstractUnitOfWork, str | None], Vim | None] | None = None,
) -> Job:
    """Read the occurrence `op_id` and its instance, and resolve what they refer to; with
    `vim_in` (`VimService.get_in`) the instance's VIM is read in the same unit of work."""
    with uow() as u:
        occ = u.op_occs.get(op_id)
        if occ is None:
            raise LookupError(op_id)
        inst = u.instances.get(occ.vnf_instance_id)
        if inst is not None and vim_in is not None:
            vim = vim_in(u, inst.vim_id)
    if inst is None:
        raise LookupError(occ.vnf_instance_id)
    vnfd = vnfd_of(inst.vnf_pkg_id)
    flavour_id = inst.flavour_id or occ.operation_params.get("flavourId")
    flavour = vnfd.flavour(flavour_id) if flavour_id else None
    if vim_in is None:
        vim = vim_of(inst.vim_id)
    infra = infra_drivers.get(vim.vim_type) if vim is not None else None
    secrets = secret_values(inst.additional_params) | secret_values(occ.operation_params)
    job = Job(occ=occ, inst=inst, vnfd=vnfd, flavour=flavour, package=files_of(inst.vnf_pkg_id),
              vim=vim, infra=infra, secrets=secrets, fence=(occ.owner, occ.epoch))
    # as read: the first write too sends only what changed (and learns a cancel from its UPDATE)
    job.writer.saved_occ, job.writer.saved_inst = snapshot(occ), snapshot(inst)
    return job


class JobStore:
    """The one path through which the engine writes occurrences and instances while it runs them.

    Checkpoints, state changes, progress lines, the failure of an occurrence that cannot be loaded
    and the takeover of an orphan all end in `_write`. That is the place where a write becomes
    conditional on still owning the occurrence (fencing: an owner epoch checked in the UPDATE, so a
    runner that lost its occurrence to another process touches nothing).
    """

    def __init__(self, uow: UowFactory, notes: Notifications) -> None:
        self.uow = uow
        self.notes = notes
        self.patience = Patience()  # bootstrap tells it what a busy database is

    # ------------------------------------------------------------------ a running job
    async def persist(self, job: Job, *, instance: bool = True, notify: bool = False) -> None:
        """Store the occurrence (and the instance); with `notify`, the state's notification too.
        The database work runs in a worker thread, after every earlier write of the job."""
        w = job.writer
        async with w.lock:
            if w.lost is not None:
                raise w.lost
            await self._write_job(job, instance=instance, notify=notify)

    async def set_state(self, job: Job, new: OpState, error: dict[str, Any] | None = None, *,
                        owe: bool = False) -> None:
        """Move the occurrence to `new`; a final state releases the occurrence and the instance.
        With `owe`, the move and its notification are written by the job's next write (`owe`)."""
        lcm.transition(job.occ, new, error=error)
        if new in FINAL_STATES:
            job.occ.owner = None
            if job.inst.lock_op_id == job.occ.id:
                job.inst.lock_op_id = None
        if owe:
            job.writer.notices.append(self._notice(job.occ))
            self.owe(job)
        else:
            await self.persist(job, notify=True)

    @staticmethod
    def owe(job: Job) -> None:
        """Record a checkpoint in memory only: the job's next write (a checkpoint, a progress flush
        or a state's) carries it, the instance included. Only for a point after which nothing
        with a side effect happens before that write (a stage's end, then the next stage's start
        or the operation's end): one write instead of two, the same durability."""
        job.writer.owed = True

    def progress(self, job: Job, message: str) -> None:
        """Append a line (secrets scrubbed) to the occurrence's progress log. The line is written
        by the next checkpoint or, when none came within `PROGRESS_FLUSH_S`, by a flush then
        (every line waiting goes together)."""
        message = scrub(message, job.secrets)
        job.occ.events.append({"time": views.ts(utcnow()), "stage": job.current_stage, "message": message})
        del job.occ.events[:-KEPT_EVENTS]
        # mirrored at DEBUG: the line is in the occurrence's progress log (API, `vnfm op watch`);
        # at INFO an operation's log is its start, its stages' starts and ends and its end
        log.debug("op %s %s: %s", job.occ.id[:8], job.current_stage, message)
        job.writer.dirty = True
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # called from a worker thread (or with no loop at all)
            loop = job.writer.loop
            w = job.writer
            if loop is not None and loop.is_running():
                loop.call_soon_threadsafe(self._flush_later, job)
            else:
                self._commit(job.occ, job.inst if w.owed else None, job.fence, w.notices)
                w.dirty, w.owed, w.notices, w.saved_occ, w.saved_inst = False, False, [], None, None
            return
        self._flush_later(job)

    async def flushed(self, job: Job) -> None:
        """Wait until every progress line so far is written (or its write failed)."""
        w = job.writer
        for _ in range(2):  # a flush already in flight may have been too early for the last lines
            if not (w.dirty or w.owed) or w.lost is not None:
                return
            self._start_flush(job)
            assert w.flush is not None
            await asyncio.wait([w.flush])

    def _flush_later(self, job: Job) -> None:
        w = job.writer
        if w.timer is None and w.lost is None:
            w.timer = asyncio.get_running_loop().call_later(PROGRESS_FLUSH_S, self._start_flush, job)

    @staticmethod
    def _no_timer(w: JobWriter) -> None:
        if w.timer is not None:
            w.timer.cancel()
            w.timer = None

    def _start_flush(self, job: Job) -> None:
        """Write the lines waiting now (a flush in flight: when it ended, what came meanwhile)."""
        w = job.writer
        self._no_timer(w)
        if w.flush is None or w.flush.done():
            w.flush = asyncio.get_running_loop().create_task(self._flush(job))

    async def _flush(self, job: Job) -> None:
        """Write the progress lines not yet written (none left: nothing to do); lines that arrive
        while it writes are due `PROGRESS_FLUSH_S` later, unless a checkpoint carries them first."""
        w = job.writer
        async with w.lock:
            if not (w.dirty or w.owed) or w.lost is not None:
                return
            try:
                await self._write_job(job, instance=False, notify=False)
            except OwnershipLost as exc:  # kept in w.lost: the next checkpoint raises it
                log.warning("op %s: progress not written: %s", job.occ.id[:8], exc)
                return
            except Exception:  # the lines stay dirty: the next checkpoint writes them
                log.exception("op %s: writing progress failed", job.occ.id[:8])
                return
        if w.dirty:
            self._flush_later(job)

    async def _write_job(self, job: Job, *, instance: bool, notify: bool) -> None:
        """One write of the job (the caller holds its lock): a snapshot, written in a thread. The
        job in memory changes only once the write succeeded (a cancel recorded meanwhile)."""
        w = job.writer
        w.loop = asyncio.get_running_loop()
        job.occ.heartbeat = utcnow()
        occ = snapshot(job.occ, w.saved_occ)
        instance = instance or w.owed
        inst = snapshot(job.inst, w.saved_inst) if instance and job.inst != w.saved_inst else None
        notices, owed = w.notices + ([self._notice(occ)] if notify else []), w.owed
        w.dirty, w.owed, w.notices = False, False, []
        self._no_timer(w)  # every line so far goes with this write
        sent = time.monotonic()
        write = asyncio.ensure_future(self.patience.run(self._commit, occ, inst, job.fence, notices, w.saved_occ,
                                                        w.saved_inst))
        try:
            cancel = await asyncio.shield(write)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                # The thread goes on: its write ends before the lock is released (no overlap).
                await asyncio.wait([write])
            failure = None if write.cancelled() else write.exception()
            if isinstance(failure, OwnershipLost):
                w.lost = failure
            elif write.cancelled() or failure is not None:  # not written: the next write carries these
                w.owed = w.owed or owed
                w.notices[:0] = notices[:len(notices) - notify]  # not the caller's own: it sees the failure
            # what the rows hold is not known: the next writes are whole
            w.dirty, w.saved_occ, w.saved_inst = True, None, None
            raise
        w.saved_occ = occ  # as the row has it now (a cancel read by the write included)
        w.owned_at = sent
        # A cancel read by this write is kept unless the state moved on meanwhile (a transition
        # made while the write was in flight ends any cancellation, as `lcm.transition` does).
        if cancel is not None and not job.occ.is_cancel_pending and job.occ.operation_state == occ.operation_state:
            job.occ.is_cancel_pending, job.occ.cancel_mode = True, cancel[0]
        if inst is not None:
            w.saved_inst = inst
        if notices:
            self.notes.wake()

    def _notice(self, occ: OpOcc) -> tuple[dict[str, Any], str]:
        """The notification of the occurrence's state as it is now (and whose it is)."""
        return views.lcm_notification(occ, START_STATES.get(occ.operation_state, "RESULT")), occ.tenant

    def _commit(self, occ: OpOcc, inst: VnfInstance | None, fence: tuple[str | None, int],
                notices: Iterable[tuple[dict[str, Any], str]] = (), since: OpOcc | None = None,
                inst_since: VnfInstance | None = None) -> tuple[str | None] | None:
        """The database work of one write (in a worker thread): a cancel recorded meanwhile is
        kept (and returned, as its mode), then the fenced write and the notifications. With
        `since` (the occurrence as this runner last read or wrote it) only what changed is written,
        and the cancel is learnt from that one statement; with `inst_since` (the instance as this
        runner last read or wrote it) only what changed of the instance."""
        cancel = None
        with self.uow() as uow:
            if since is not None:
                cancel = self._write(uow, occ, inst, fence, since, inst_since)
                if cancel is not None:  # the row's, as the whole write would have kept it
                    occ.is_cancel_pending, occ.cancel_mode = True, cancel[0]
            else:
                if occ.operation_state in lcm.CANCELLABLE and not occ.is_cancel_pending:
                    self._keep_cancel(uow, occ)
                    if occ.is_cancel_pending:
                        cancel = (occ.cancel_mode,)
                self._write(uow, occ, inst, fence, inst_since=inst_since)
            for notice, tenant in notices:
                self.notes.stage(uow, notice, tenant=tenant)
            uow.commit()
        return cancel

    # ------------------------------------------------------------------ no job (yet)
    async def fail_unloadable(self, op_id: str, exc: Exception) -> None:
        """The occurrence could not be loaded into a job: a STARTING / PROCESSING one ends FAILED_TEMP."""
        await self.patience.run(self._fail_unloadable, op_id, exc)

    def _fail_unloadable(self, op_id: str, exc: Exception) -> None:
        with self.uow() as uow:
            occ = uow.op_occs.get(op_id)
            if occ is not None and occ.operation_state in (OpState.STARTING, OpState.PROCESSING):
                if occ.operation_state == OpState.STARTING:
                    lcm.transition(occ, OpState.PROCESSING)
                lcm.transition(occ, OpState.FAILED_TEMP, error=OperationFailed(str(exc)).problem())
                self._write(uow, occ, None, (occ.owner, occ.epoch))
                uow.commit()

    async def mark_interrupted(self, op_id: str) -> None:
        """A taken-over occurrence whose process died mid-operation becomes FAILED_TEMP."""
        if await self.patience.run(self._mark_interrupted, op_id):
            self.notes.wake()

    def _mark_interrupted(self, op_id: str) -> bool:
        with self.uow() as uow:
            occ = uow.op_occs.get(op_id)
            if occ is None or occ.operation_state not in (OpState.PROCESSING, OpState.ROLLING_BACK):
                return False
            stage = occ.plan.get("current", "")
            problem = OperationFailed(
                "the VNFM process running this operation stopped"
                + (f" during stage '{stage}'" if stage else "")
                + "; retry resumes it, rollback undoes it, fail ends it"
            ).problem()
            fence = (occ.owner, occ.epoch)
            lcm.transition(occ, OpState.FAILED_TEMP, error=problem)
            occ.owner = None
            self._write(uow, occ, None, fence)
            self._stage_notification(uow, occ)
            uow.commit()
        return True

    # ------------------------------------------------------------------ the one write
    @staticmethod
    def _write(uow: AbstractUnitOfWork, occ: OpOcc, inst: VnfInstance | None, fence: tuple[str | None, int],
               since: OpOcc | None = None, inst_since: VnfInstance | None = None) -> tuple[str | None] | None:
        """Every write of an occurrence (and its instance) by the engine, fenced: the occurrence is
        written first and only if it still has the owner and epoch in `fence`; otherwise nothing
        is written (the unit of work is not committed) and `OwnershipLost` is raised. With
        `since` (the occurrence as this runner last wrote it) only what changed is written, and a
        cancel the row has that `occ` does not is returned (its mode); likewise the instance with
        `inst_since`."""
        owner, epoch = fence
        cancel = None
        if since is None:
            written = uow.op_occs.save_owned(occ, owner, epoch)
        else:
            written, mode = uow.op_occs.save_changes(occ, since, owner, epoch)
            cancel = (mode,) if mode is not None and not occ.is_cancel_pending else None
        if not written:
            raise OwnershipLost(f"occurrence {occ.id} is no longer owned by {owner or 'nobody'} (epoch {epoch})")
        if inst is not None and inst_since is not None:
            uow.instances.save_changes(inst, inst_since)
        elif inst is not None:
            uow.instances.save(inst)
        return cancel

    @staticmethod
    def _keep_cancel(uow: AbstractUnitOfWork, occ: OpOcc) -> None:
        """A cancel recorded (by the API) since the job read its occurrence is kept, not
        overwritten (a one-column read: its mode)."""
        mode = uow.op_occs.pending_cancel(occ.id)
        if mode is not None and not occ.is_cancel_pending:
            occ.is_cancel_pending, occ.cancel_mode = True, mode

    def _stage_notification(self, uow: AbstractUnitOfWork, occ: OpOcc) -> None:
        status = START_STATES.get(occ.operation_state, "RESULT")
        self.notes.stage(uow, views.lcm_notification(occ, status), tenant=occ.tenant)
