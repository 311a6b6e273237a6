"""SqlAlchemyUnitOfWork and its repositories (SQLAlchemy Core statements over one Connection).

No ORM mapping is involved: `add()`/`save()` write the whole entity with explicit INSERT/UPDATE
statements, and `get()`/`list()` build fresh domain objects from the row every time, so nothing is
shared between the caller's objects and the database layer (no ORM: no identity map, no dirty tracking).

Concurrency:
* `instances.save` and `save_changes` are conditional UPDATEs (`... WHERE lock_op_id` is what
  this unit of work read) checked by their rowcount: a lock that another transaction took or
  released since is never overwritten (Conflict), so of two requests that read a free instance
  exactly one takes it, across processes. `unlock` only clears its own lock.
* `op_occs.claim_orphans` and `outbox.claim` use `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL
  plus a conditional UPDATE per row (the only mechanism on SQLite, where units of work are
  serialised anyway).
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    bindparam,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from vnfm.adapters.db import bodypatch, mappers, tables
from vnfm.adapters.db.alarms import SqlAlarmRepository, SqlWatchLeases
from vnfm.adapters.db.kv import SqlKvStore
from vnfm.adapters.db.op_occs import SqlOpOccRepository
from vnfm.adapters.db.outbox import SqlOutbox, outbox_commits
from vnfm.adapters.db.paging import Col
from vnfm.adapters.db.repository import TableRepository, Tx
from vnfm.domain.errors import Conflict, NotFound
from vnfm.domain.model import Subscription, Vim, VnfInstance, VnfPackage, utcnow
from vnfm.service.ports import AbstractUnitOfWork, Condition, Sealer


class SqlPackageRepository(TableRepository[VnfPackage]):
    table = tables.vnf_packages
    label = "VNF package"
    columns = {"id": Col("id", ordered=True), "vnfdId": Col("vnfd_id"),
               "onboardingState": Col("onboarding_state", ordered=True),
               "operationalState": Col("operational_state", ordered=True),
               "usageState": Col("usage_state", ordered=True)}

    def __init__(self, tx: Tx) -> None:
        super().__init__(tx, mappers.package_to_row, mappers.package_from_row)

    def put_content(self, pkg_id: str, content: bytes) -> None:
        c = tables.vnf_package_contents
        self._exec(delete(c).where(c.c.pkg_id == pkg_id))
        self._exec(insert(c).values(pkg_id=pkg_id, size=len(content), content=bytes(content),
                                    updated_at=utcnow()))

    def get_content(self, pkg_id: str) -> bytes | None:
        c = tables.vnf_package_contents
        data = self._exec(select(c.c.content).where(c.c.pkg_id == pkg_id)).scalar_one_or_none()
        return None if data is None else bytes(data)

    def content_size(self, pkg_id: str) -> int | None:
        c = tables.vnf_package_contents
        size = self._exec(select(c.c.size).where(c.c.pkg_id == pkg_id)).scalar_one_or_none()
        return None if size is None else int(size)

    def by_vnfd_id(self, vnfd_id: str) -> builtins.list[VnfPackage]:
        return self._select(self.table.c.vnfd_id == vnfd_id)

    def delete(self, entity_id: str) -> None:
        c = tables.vnf_package_contents
        self._exec(delete(c).where(c.c.pkg_id == entity_id))  # also when foreign keys are off
        super().delete(entity_id)


_UNSEEN = object()


class SqlInstanceRepository(TableRepository[VnfInstance]):
    table = tables.vnf_instances
    label = "VNF instance"
    columns = {"id": Col("id", ordered=True), "vnfdId": Col("vnfd_id"), "vnfPkgId": Col("vnf_pkg_id", ordered=True),
               "vnfInstanceName": Col("vnf_instance_name"),
               "instantiationState": Col("instantiation_state", ordered=True)}
    body_parts = {"instantiatedVnfInfo": ("resources", "ext_virtual_links", "ext_managed_virtual_links",
                                          "additional_params", "driver_state"),
                  "vimConnectionInfo": ("vim_connection_info",), "metadata": ("metadata",),
                  "extensions": ("extensions",), "vnfConfigurableProperties": ("vnf_configurable_properties",)}

    def __init__(self, tx: Tx, box: Sealer | None = None) -> None:
        super().__init__(tx, mappers.sealing(mappers.instance_to_row, box), self._load)
        self._box = box
        self._from_body = mappers.unsealing(mappers.instance_from_row, box)
        # lock_op_id as this unit of work last saw it, per instance (optimistic check in save()).
        self._seen_lock: dict[str, str | None] = {}

    def _load(self, row: Mapping[str, Any]) -> VnfInstance:
        inst = self._from_body(row)
        self._seen_lock[inst.id] = inst.lock_op_id
        return inst

    def page(self, conditions: Sequence[Condition], after_id: str | None, limit: int,
             omit: frozenset[str] = frozenset()) -> builtins.list[VnfInstance]:
        found = super().page(conditions, after_id, limit, omit)
        if omit:  # partial instances: a save() of one must not pass the lock check
            for inst in found:
                self._seen_lock.pop(inst.id, None)
        return found

    def add(self, entity: VnfInstance) -> None:
        super().add(entity)
        self._seen_lock[entity.id] = entity.lock_op_id

    def save(self, entity: VnfInstance) -> None:
        """Write the whole instance, lock_op_id included (that is how an operation releases it).

        If this unit of work read the instance and its lock changed since (another transaction
        took or released it), raise Conflict instead of overwriting the other's lock.
        """
        t = self.table
        row = self._to_row(entity)
        entity_id = row.pop("id")
        stmt = update(t).where(t.c.id == bindparam("_where_id"))
        params = {"_where_id": entity_id, **row}
        seen = self._seen_lock.get(entity_id, _UNSEEN)
        if seen is not _UNSEEN:
            stmt = stmt.where(t.c.lock_op_id.is_not_distinct_from(bindparam("_seen_lock", type_=t.c.lock_op_id.type)))
            params["_seen_lock"] = seen
        if self._exec(stmt, params).rowcount == 0:
            self._refused(entity_id)
        self._seen_lock[entity_id] = entity.lock_op_id

    def save_changes(self, entity: VnfInstance, since: VnfInstance) -> None:
        """`save`, writing only what differs from `since` (the instance as the caller last read or
        wrote it): the changed columns and the changed keys of the JSON body, patched in SQL, only
        those keys sealed (nothing changed: no statement). The same lock check as `save`."""
        if entity.id != since.id:
            raise ValueError(f"VNF instance {entity.id} saved as changes since instance {since.id}")
        keys = tuple(k for k in mappers.INSTANCE_BODY if getattr(entity, k) != getattr(since, k))
        if not keys:
            return
        part = mappers.instance_to_dict(entity, keys, copied=False)  # serialised below, not kept
        if self._box is not None:
            part = self._box.seal(part, scope=entity.id)
        columns = tuple(c for c in mappers.INSTANCE_COLUMNS if c in keys)
        seen = self._seen_lock.get(entity.id, _UNSEEN)
        params: dict[str, Any] = {"_id": entity.id, **{f"_c_{c}": mappers.INSTANCE_COLUMNS[c](entity) for c in columns},
                                  **bodypatch.patch_params(part, [], self.dialect)}
        if seen is not _UNSEEN:
            params["_seen_lock"] = seen
        stmt = _instance_changes(self.dialect, columns, keys, seen is not _UNSEEN)
        if self._exec(stmt, params).rowcount == 0:
            self._refused(entity.id)
        self._seen_lock[entity.id] = entity.lock_op_id

    def _refused(self, entity_id: str) -> None:
        t = self.table
        if self._exec(select(t.c.id).where(t.c.id == entity_id)).first() is None:
            raise NotFound(f"VNF instance {entity_id} does not exist")
        raise Conflict(f"VNF instance {entity_id} was locked or unlocked by another operation meanwhile")

    def delete(self, entity_id: str) -> None:
        super().delete(entity_id)
        self._seen_lock.pop(entity_id, None)

    def on_vims(self, vim_ids: Sequence[str]) -> builtins.list[VnfInstance]:
        return self._select(self.table.c.vim_id.in_(list(vim_ids))) if vim_ids else []

    def unlock(self, instance_id: str, op_id: str) -> None:
        """Release the lock if `op_id` holds it; otherwise do nothing."""
        t = self.table
        res = self._exec(
            update(t).where(t.c.id == instance_id, t.c.lock_op_id == op_id).values(lock_op_id=None)
        )
        if res.rowcount == 1:
            self._patch_body(instance_id, {"lock_op_id": None})
            self._seen_lock[instance_id] = None

    def locked_by(self, instance_id: str) -> str | None:
        t = self.table
        return self._exec(select(t.c.lock_op_id).where(t.c.id == instance_id)).scalar_one_or_none()


@functools.lru_cache(maxsize=256)
def _instance_changes(dialect: str, columns: tuple[str, ...], keys: tuple[str, ...], check_lock: bool) -> Any:
    """The UPDATE of `SqlInstanceRepository.save_changes` for one shape of change (built once)."""
    t = tables.vnf_instances
    values: dict[str, Any] = {c: bindparam(f"_c_{c}", type_=t.c[c].type) for c in columns}
    values["body"] = bodypatch.patched(t.c.body, keys, 0, dialect)
    stmt = update(t).where(t.c.id == bindparam("_id")).values(**values)
    if check_lock:
        stmt = stmt.where(t.c.lock_op_id.is_not_distinct_from(bindparam("_seen_lock", type_=t.c.lock_op_id.type)))
    return stmt


class SqlSubscriptionRepository(TableRepository[Subscription]):
    table = tables.subscriptions
    label = "subscription"

    def __init__(self, tx: Tx) -> None:
        super().__init__(tx, mappers.subscription_to_row, mappers.subscription_from_row)

    def by_kind(self, kind: str) -> builtins.list[Subscription]:
        return self._select(self.table.c.kind == kind)

    def page_of_kind(self, kind: str, conditions: Sequence[Condition], after_id: str | None,
                     limit: int) -> builtins.list[Subscription]:
        return self._page((self.table.c.kind == kind,), conditions, after_id, limit)


class SqlVimRepository(TableRepository[Vim]):
    table = tables.vims
    label = "VIM"

    def __init__(self, tx: Tx) -> None:
        super().__init__(tx, mappers.vim_to_row, mappers.vim_from_row)

    def by_name(self, name: str) -> builtins.list[Vim]:
        return self._select(self.table.c.name == name)

    def of_type(self, vim_type: str) -> builtins.list[Vim]:
        return self._select(self.table.c.vim_type == vim_type)

    def default(self) -> Vim | None:
        """The default VIM (the simulated cloud) serves every tenant: not confined to the caller's."""
        t = self.table
        row = self._exec(select(t).where(t.c.is_default.is_(True)).order_by(*self._order)).mappings().first()
        return None if row is None else self._from_row(dict(row))


# attribute of the unit of work -> how its repository is made (over the transaction, with the box)
_REPOSITORIES: dict[str, Callable[[Tx, Sealer | None], Any]] = {
    "packages": lambda tx, _box: SqlPackageRepository(tx),
    "instances": SqlInstanceRepository,
    "op_occs": SqlOpOccRepository,
    "subscriptions": lambda tx, _box: SqlSubscriptionRepository(tx),
    "vims": lambda tx, _box: SqlVimRepository(tx),
    "outbox": lambda tx, _box: SqlOutbox(tx),
    "kv": lambda tx, _box: SqlKvStore(tx),
    "alarms": lambda tx, _box: SqlAlarmRepository(tx),
    "leases": lambda tx, _box: SqlWatchLeases(tx),
}


class SqlAlchemyUnitOfWork(AbstractUnitOfWork):
    """One database transaction: `with uow: ...; uow.commit()`; leaving without commit rolls back.

    Its repositories are made when first used (most units of work use one or two of them), and
    share the transaction's one connection (`Tx`)."""

    packages: SqlPackageRepository
    instances: SqlInstanceRepository
    op_occs: SqlOpOccRepository
    subscriptions: SqlSubscriptionRepository
    vims: SqlVimRepository
    outbox: SqlOutbox
    kv: SqlKvStore
    alarms: SqlAlarmRepository
    leases: SqlWatchLeases

    def __init__(self, session_factory: sessionmaker[Session] | Engine, box: Sealer | None = None) -> None:
        """`session_factory`: the engine, or a session factory bound to it (its sessions are not
        used: see `Tx`). `box`: encrypts the secrets of instance and occurrence bodies (request
        parameters, VIM connection info, driver state) before they are stored."""
        engine = session_factory if isinstance(session_factory, Engine) else session_factory.kw["bind"]
        self.box = box
        # A connection is only taken (and a transaction begun) on the first statement.
        self.tx = Tx(engine)

    def __getattr__(self, name: str) -> Any:
        """A repository, made on first use (then an ordinary attribute)."""
        make = _REPOSITORIES.get(name)
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        repo = self.__dict__[name] = make(self.tx, self.box)
        return repo

    def __enter__(self) -> SqlAlchemyUnitOfWork:
        return self

    def __exit__(self, *args: object) -> None:
        self.rollback()

    def close(self) -> None:
        """End the transaction (rolled back unless committed) and give the connection back."""
        self.rollback()

    def commit(self) -> None:
        self.tx.commit()
        outbox = self.__dict__.get("outbox")
        if outbox is not None and outbox.added:  # the notifier has something new to read
            outbox.added = 0
            outbox_commits(self.tx.engine).committed()

    def rollback(self) -> None:
        try:
            self.tx.rollback()
        finally:
            outbox = self.__dict__.get("outbox")
            if outbox is not None:
                outbox.added = 0
            instances = self.__dict__.get("instances")
            if instances is not None:
                instances._seen_lock.clear()  # what it recorded may have been rolled back
