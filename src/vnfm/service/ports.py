"""Ports: the interfaces the service layer needs from the outside world.

Adapters implement them: vnfm.adapters.db (unit of work), vnfm.adapters.infra (VIMs),
vnfm.adapters.mgmt (management drivers), node access (SSH on real clouds, the simulated cloud's
twin on the simulator), vnfm.adapters.notify (subscriptions' callbacks). The composition root
(vnfm.bootstrap) binds them; nothing below it knows which adapter it was given.
"""

from __future__ import annotations

import abc
import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from vnfm.domain.access import DEFAULT_TENANT
from vnfm.domain.alarms import Alarm
from vnfm.domain.model import OpOcc, Subscription, Vim, VnfInstance, VnfPackage
from vnfm.domain.params import Declared
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.domain.vnfd import Flavour, Vnfd
from vnfm.nodesteps.base import StepExecutor

# ============================================================================= persistence
T = TypeVar("T")


@dataclass(frozen=True)
class Condition:
    """One SOL013 filter term on a top-level attribute of the API document (`attr` as a client
    names it, e.g. "vnfdId"; `op` eq/neq/in/nin/gt/gte/lt/lte/cont/ncont; values as given).

    A repository uses the conditions it can translate to narrow a page in the database and
    ignores the others: what `page` returns is a superset of the matches, in list order, and the
    caller checks every term on it (so the semantics stay those of the API's filter)."""

    attr: str
    op: str
    values: tuple[str, ...]


class Repository(Protocol, Generic[T]):
    def add(self, entity: T) -> None: ...
    def get(self, entity_id: str) -> T | None: ...
    def list(self) -> list[T]: ...
    def save(self, entity: T) -> None: ...
    def delete(self, entity_id: str) -> None: ...

    def page(self, conditions: Sequence[Condition], after_id: str | None, limit: int,
             omit: frozenset[str] = frozenset()) -> builtins.list[T]:
        """At most `limit` entities in list order after the one with id `after_id` (from the start
        when None), narrowed by those `conditions` the database can evaluate. NotFound when no
        entity has id `after_id` (any more). `omit`: top-level API attributes the caller will not
        read; the repository may leave out of the entities what only they need (such entities
        are partial: to read, never to save)."""
        ...


class PackageRepository(Repository[VnfPackage], Protocol):
    def put_content(self, pkg_id: str, content: bytes) -> None: ...
    def get_content(self, pkg_id: str) -> bytes | None: ...
    def by_vnfd_id(self, vnfd_id: str) -> list[VnfPackage]: ...


class InstanceRepository(Repository[VnfInstance], Protocol):
    def unlock(self, instance_id: str, op_id: str) -> None: ...

    def save_changes(self, entity: VnfInstance, since: VnfInstance) -> None:
        """`save`, writing only what differs from `since` (the instance as last read or written)."""

    def on_vims(self, vim_ids: Sequence[str]) -> builtins.list[VnfInstance]:
        """The instances whose VIM is one of `vim_ids` (an indexed column)."""


class OpOccRepository(Repository[OpOcc], Protocol):
    def for_instance(self, instance_id: str) -> list[OpOcc]: ...

    def get_for_update(self, op_id: str) -> OpOcc | None:
        """`get`, with the row locked until the unit of work ends (read-modify-write)."""

    def claim_orphans(self, owner: str, stale_before: Any) -> list[OpOcc]:
        """Occurrences STARTING/PROCESSING/ROLLING_BACK whose owner (never `owner` itself)
        stopped heart-beating, now `owner`'s (epoch bumped)."""

    def pending_cancel(self, op_id: str) -> str | None:
        """The mode of a cancel recorded for the occurrence (None: none); the row is locked."""

    def abandoned(self, owner: str, stale_before: Any) -> list[OpOcc]:
        """`owner`'s own active occurrences whose heartbeat is older than `stale_before`."""

    def heartbeat(self, op_id: str, owner: str, now: Any = None) -> bool:
        """Bump the heartbeat of an occurrence `owner` runs."""

    def save_owned(self, occ: OpOcc, owner: str | None, epoch: int) -> bool:
        """`save`, only if the stored occurrence still has this owner and epoch (fencing). False
        (and nothing written) when another process took it over or it was retried meanwhile."""

    def save_changes(self, occ: OpOcc, since: OpOcc, owner: str | None, epoch: int) -> tuple[bool, str | None]:
        """`save_owned` of only what differs from `since` (as the caller last wrote it), keeping a cancel
        the row has while `occ` is cancellable; returns (written, the row's cancel mode after it)."""


class VimRepository(Repository[Vim], Protocol):
    def default(self) -> Vim | None: ...
    def of_type(self, vim_type: str) -> list[Vim]: ...


class SubscriptionRepository(Repository[Subscription], Protocol):
    def page_of_kind(self, kind: str, conditions: Sequence[Condition], after_id: str | None,
                     limit: int) -> builtins.list[Subscription]:
        """`page` over the subscriptions of one API ("vnflcm" / "vnfpkgm")."""
        ...


class AlarmRepository(Repository[Alarm], Protocol):
    def open_for(self, instance_ids: Sequence[str]) -> builtins.list[Alarm]: ...
    def open_outside(self, instance_ids: Sequence[str]) -> builtins.list[Alarm]: ...


class WatchLeases(Protocol):
    """Which process watches which instance's health (vnfm.adapters.db.alarms)."""

    def acquire(self, owner: str, instance_ids: Sequence[str], now: Any, ttl: float) -> builtins.list[str]: ...
    def release(self, owner: str, instance_ids: Sequence[str], *, leaving: bool = False) -> None: ...
    def forget(self, keep: Sequence[str], now: Any) -> None: ...
    def state(self, instance_id: str) -> dict[str, Any]: ...
    def states(self, instance_ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...
    def put_state(self, instance_id: str, owner: str, state: dict[str, Any]) -> bool: ...


@dataclass
class OutboxEntry:
    """A notification waiting for delivery. `info`: the instance / package document filters read
    when it cannot be looked up any more (it was deleted)."""

    id: str
    notification: dict[str, Any]
    info: dict[str, Any] | None
    published_at: str
    tenant: str = DEFAULT_TENANT  # only that tenant's subscriptions get it


class Outbox(Protocol):
    """Notifications stored in the transaction of the change they report (transactional outbox)."""

    def add(self, notification: dict[str, Any], info: dict[str, Any] | None = None, *, owner: str = "",
            tenant: str = DEFAULT_TENANT, if_subscribed: bool = False) -> bool:
        """Store one for `owner`'s notifier (any, once overdue); `if_subscribed`: only if it has a subscriber."""

    def claim(self, owner: str, reclaim_before: Any, limit: int = 100) -> list[OutboxEntry]:
        """Take the oldest entries written by `owner` and not yet taken, plus those taken or written
        before `reclaim_before` (their process died), oldest first; each is taken once."""
        ...

    def remove(self, entry_id: str) -> None: ...


class Sealer(Protocol):
    """Encrypts secrets inside documents before they are stored, and decrypts them when read back
    (vnfm.service.secrets.SecretBox). The database adapter seals instance and occurrence bodies."""

    def seal(self, value: Any, scope: str = "") -> Any: ...
    def unseal(self, value: Any) -> Any: ...


class RotatingSealer(Sealer, Protocol):
    """A Sealer with several keys (the newest encrypts): `rotate` re-encrypts with the newest."""

    rotating: bool

    def rotate(self, value: Any) -> Any: ...


class AbstractUnitOfWork(abc.ABC):
    """One transaction. `with uow: ...; uow.commit()`; leaving without commit rolls back."""

    packages: PackageRepository
    instances: InstanceRepository
    op_occs: OpOccRepository
    subscriptions: SubscriptionRepository
    vims: VimRepository
    outbox: Outbox
    alarms: AlarmRepository
    leases: WatchLeases

    def __enter__(self) -> AbstractUnitOfWork:
        return self

    def __exit__(self, *args: object) -> None:
        self.rollback()

    @abc.abstractmethod
    def commit(self) -> None: ...

    @abc.abstractmethod
    def rollback(self) -> None: ...


UowFactory = Callable[[], AbstractUnitOfWork]


# ============================================================================= package files
class PackageFiles(Protocol):
    """Read-only view of an onboarded package's files (extracted CSAR)."""

    root: Path

    def read(self, path: str) -> bytes: ...
    def exists(self, path: str) -> bool: ...
    def listing(self) -> list[str]: ...


# ============================================================================= infrastructure
@dataclass(frozen=True)
class Beat:
    """What one heartbeat found: the occurrences still owned (their heartbeat renewed), among
    them those a FORCEFUL cancel was recorded for (by any process), and those taken from it
    (another owner now, or none while not final: taken over and interrupted). An occurrence that
    ended (final, released by its own runner) is in neither."""

    owned: frozenset[str]
    forceful: frozenset[str] = frozenset()
    taken: frozenset[str] = frozenset()


class Liveness(abc.ABC):
    """The engine's liveness path to the database, apart from units of work (its own connection,
    never waiting on row locks): heartbeats and the fencing check made before every side effect."""

    @abc.abstractmethod
    def beat(self, owner: str, op_ids: Sequence[str], now: Any) -> Beat:
        """Renew, in one statement, the heartbeat of those of `op_ids` that `owner` still owns."""

    @abc.abstractmethod
    def owns(self, op_id: str, owner: str | None, epoch: int) -> bool:
        """Whether the occurrence still has this owner and epoch (a cheap read, no lock)."""

    def close(self) -> None:
        """Release its connections."""
        return None


@dataclass
class InfraContext:
    """Everything an infrastructure driver needs to act for one instance."""

    instance_id: str
    op_id: str
    vnfd: Vnfd
    flavour: Flavour
    package: PackageFiles | None
    vim: Vim
    ext_virtual_links: list[dict[str, Any]] = field(default_factory=list)
    additional_params: dict[str, Any] = field(default_factory=dict)
    resources: VnfResources = field(default_factory=VnfResources)
    progress: Callable[[str], None] = lambda msg: None
    operation_params: dict[str, Any] = field(default_factory=dict)  # this operation's request (terminationType, ...)


class InfraDriver(abc.ABC):
    """A VIM type. Every call is idempotent: calling it again after a crash converges.

    Counts are absolute (like Heat's desired_capacity), so re-applying a call does not add twice.
    """

    vim_type: str = ""
    # the additionalParams keys this driver acts on (see MgmtDriver.declared)
    declared: Declared[Any] | None = None

    @abc.abstractmethod
    async def deploy(self, ctx: InfraContext, counts: dict[str, int]) -> VnfResources:
        """Create (or complete) the VNF's resources with `counts` VNFCs per VDU."""

    @abc.abstractmethod
    async def update(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str]) -> VnfResources:
        """Scale to `counts`; when shrinking, remove exactly the VNFCs with ids in `remove`."""

    @abc.abstractmethod
    async def heal(self, ctx: InfraContext, vnfc_ids: Sequence[str], *, keep_storage: bool = True) -> VnfResources:
        """Replace the servers of `vnfc_ids`, keeping VNFC ids, ports and addresses."""

    @abc.abstractmethod
    async def undeploy(self, ctx: InfraContext) -> None:
        """Delete every resource of the VNF (no error when already gone)."""

    @abc.abstractmethod
    async def current(self, ctx: InfraContext) -> VnfResources:
        """Read back what exists now."""

    async def probe(self, ctx: InfraContext, vnfc: Vnfc) -> str | None:
        """Is the VNFC's server up and reachable? None when it is, else the reason."""
        return None

    async def probe_all(self, ctx: InfraContext, vnfcs: Sequence[Vnfc]) -> list[str | None]:
        """`probe` of each VNFC (the health watcher's, every round): one call to the VIM where the
        driver can; by default the probes at once."""
        import asyncio

        return list(await asyncio.gather(*(self.probe(ctx, v) for v in vnfcs)))

    def check_instantiate(self, ctx: InfraContext) -> None:
        """Called (in a worker thread, synchronously) when an instantiate request arrives, before
        anything exists: what the VIM can tell now (e.g. an object the VNF would create already
        belongs to another instance) is refused here, raising UnprocessableEntity naming it."""
        return None

    async def reserve_address(self, ctx: InfraContext, cp_name: str, purpose: str) -> str:
        """An address on the network of the VNF's connection point `cp_name` that no port uses, kept
        for `purpose` (e.g. "control-plane-vip") until `release_address` or `undeploy`: a
        virtual IP that moves between servers. Asking again for the same purpose gives the same
        address (idempotent). On OpenStack this is a Neutron port; on the simulator an address the
        simulated cloud records as taken."""
        from vnfm.domain.errors import UnprocessableEntity

        raise UnprocessableEntity(f"VIM type '{self.vim_type}' cannot reserve an address for {purpose}: "
                                  "give it in the request instead")

    async def release_address(self, ctx: InfraContext, purpose: str) -> None:
        """Give back what `reserve_address` kept for `purpose` (no error when there is none)."""
        return None


# ============================================================================= node access
@dataclass(frozen=True)
class NodeLogin:
    """How to log in to a host (from the request's additionalParams)."""

    username: str
    password: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class NodeHost:
    """A host a management driver acts on. `vnfc_id` is None for a host outside the VNF (e.g. the
    operator's Ansible server). Its SSH host key is pinned under `pin` (the VNFC id by default)."""

    address: str  # where the VNFM reaches it
    login: NodeLogin
    vnfc_id: str | None = None
    pin: str = ""
    # node steps run as root (`sudo -n` for a non-root login): None = when it is a VNFC (vnfc_id);
    # True for a host of another VNF that needs root too (a cluster's load balancer a CNF configures)
    become: bool | None = None

    @property
    def pin_key(self) -> str:
        return self.pin or self.vnfc_id or f"host:{self.address}"


class NodeAccess(abc.ABC):
    """How management drivers reach hosts on one kind of VIM: real SSH for real clouds, the
    simulated cloud's twin for the simulator. The composition root gives each hook the one that
    fits the instance's VIM (`LcmContext.nodes`); a driver never asks which one it got."""

    @abc.abstractmethod
    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> StepExecutor:
        """An executor for `hosts` (addressed by `NodeHost.address`). `pins` maps `pin_key` to a
        pinned host key: a first contact records the key there, a later one must present it
        (HostKeyChanged otherwise). The caller closes the session (`await ex.close()`)."""


class SnapshotStore(Protocol):
    """Copies of cluster snapshots (an etcd snapshot taken before an upgrade) kept by the VNFM,
    off the cluster, per VNF instance; bounded in count and size by the adapter."""

    def put(self, instance_id: str, name: str, data: bytes) -> str: ...  # -> where (for the log)
    def get(self, instance_id: str, name: str) -> bytes | None: ...
    def list(self, instance_id: str) -> builtins.list[dict[str, Any]]: ...  # name, size, at; oldest first


# ============================================================================= management drivers
@dataclass
class LcmContext:
    """The one object a management driver gets for every hook.

    `added` / `removed` / `healed` say exactly which VNFCs the operation adds, removes or replaces,
    decided by the engine before the hooks run: drivers never guess from IPs or creation times.
    """

    hook: str  # e.g. "scale_end"
    operation: str  # LcmOperation value
    op_id: str
    instance: VnfInstance
    request: dict[str, Any]  # the LCM request body as received
    additional_params: dict[str, Any]  # instantiate's additionalParams overridden by this request's
    vnfd: Vnfd
    flavour: Flavour
    package: PackageFiles | None
    resources: VnfResources  # the VNF's resources at the time of the hook
    added: list[Vnfc] = field(default_factory=list)
    removed: list[Vnfc] = field(default_factory=list)
    healed: list[Vnfc] = field(default_factory=list)
    # Rollback of a scale-in whose VMs still exist: the VNFCs it was removing stay and go back into
    # service (scale_start with rollback=True: e.g. uncordon the nodes a drain cordoned).
    restored: list[Vnfc] = field(default_factory=list)
    heal_entire: bool = False
    rollback: bool = False  # True when the hook runs to undo a failed operation
    infra: InfraDriver | None = None
    infra_ctx: InfraContext | None = None
    vims: VimRegistry | None = None
    state: dict[str, Any] = field(default_factory=dict)  # driver-private, persisted per instance
    progress: Callable[[str], None] = lambda msg: None
    nodes: NodeAccess | None = None  # how to reach hosts on this instance's VIM
    # this driver's declared parameters, parsed: instantiate's, or the stored ones with this
    # request's merged in by the driver's declared rule (None: the driver declares none)
    params: Any = None
    # the VNFM's store of snapshot copies (None: none configured); `phase`: which part of a
    # multi-stage hook the engine runs (change_vnfpkg: snapshot, control_plane, workers)
    snapshots: SnapshotStore | None = None
    phase: str = ""


@dataclass(frozen=True)
class DependentCnf:
    """A VNF instance (a CNF) on a Kubernetes VIM that another instance, its cluster, registered
    (the VIM's `extra.vnf_instance_id`). `driver_state`: a copy of its management drivers' state."""

    instance_id: str
    name: str
    vim_id: str
    instantiation_state: str
    driver_state: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.instance_id})" if self.name and self.name != self.instance_id else self.instance_id


class VimRegistry(Protocol):
    """What drivers may do with the VIM registry (register the Kubernetes cluster they built)."""

    def list(self) -> list[Vim]: ...
    def register(self, vim: Vim) -> Vim: ...
    def update(self, vim: Vim) -> Vim: ...
    def get(self, vim_id: str) -> Vim | None: ...
    def delete(self, vim_id: str) -> None: ...

    def dependents(self, instance_id: str) -> builtins.list[DependentCnf]:
        """The CNF instances on the Kubernetes VIMs `instance_id` registered (none: [])."""
        ...


class MgmtDriver:
    """A management-driver plug-in. The engine calls `handle(hook, ctx)` and nothing else.

    The default `handle` dispatches to a method named like the hook (e.g. `scale_end`); hooks a
    driver does not define are no-ops. Raising an exception fails the operation (FAILED_TEMP).
    """

    name: str = ""
    # hooks this driver runs even when the VNFD binds them to nothing, provided the flavour binds
    # the driver to another hook (e.g. a check before instantiate creates resources)
    implicit_hooks: frozenset[str] = frozenset()
    # the additionalParams keys this driver acts on, as a schema (domain/params.py): the engine
    # accepts a top-level key only when the engine, the VIM's infrastructure driver or a driver of
    # the flavour declares it, and hands the hooks `ctx.params`, parsed with the declared merge rule
    declared: Declared[Any] | None = None

    def validate_request(self, operation: str, request: dict[str, Any], instance: VnfInstance,
                         flavour: Flavour, package: PackageFiles | None = None) -> None:
        """Called synchronously when an LCM request arrives, before any occurrence exists, with the
        flavour the operation runs on (the requested one for instantiate) and the package's files:
        everything that can be checked from the request, the VNFD and the package (CP names, aspect
        ids, CIDRs, paths of package files) is checked here, not when a hook runs.

        Raise vnfm.domain.errors.BadRequest / UnprocessableEntity naming the bad key and why.
        """

    async def handle(self, hook: str, ctx: LcmContext) -> None:
        method = getattr(self, hook, None)
        if method is not None:
            await method(ctx)


@dataclass(frozen=True)
class NodeState:
    """A Kubernetes node as its cluster's API reports it: Ready condition and role (its labels)."""

    ready: bool
    role: str  # "master" (control-plane label) or "worker"
    reason: str = ""  # the Ready condition's reason / message when not ready


# The nodes of the cluster behind a Kubernetes VIM, by node name (synchronous: run it in a thread;
# OperationFailed when the API does not answer). vnfm.adapters.kube.nodes.cluster_nodes.
ClusterNodes = Callable[[Vim], dict[str, NodeState]]


class Notifier(Protocol):
    """Delivers notifications to subscribers (asynchronously, with retries). Services store them in
    `uow.outbox` with the change they report, then call `wake()` after the commit."""

    def wake(self) -> None:
        """Deliver what the outbox holds for this process now."""
