"""The notification outbox (vnfm.service.ports.Outbox) and what tells the notifier that it holds
something new.

Staging (`add`): with `if_subscribed` the row is inserted by one `INSERT ... SELECT ... WHERE
EXISTS` (a subscription of the notification's kind for its tenant), so a notification nobody can
receive costs no row, no claim and no removal, and no extra statement when someone can. The rule
(SOL003: a subscriber gets the events that happen while it is subscribed): a notification is
stored when a subscription of its kind and tenant is visible to the statement that stages it,
inside the transaction of the change it reports. On SQLite every unit of work holds the one write
lock, so a subscription committed before the change's transaction began is seen and one committed
after it ended is not. On PostgreSQL (READ COMMITTED) the statement sees subscriptions committed
before it runs (staging is the change's last statement but the commit): one committed while the
change's transaction is still open may miss that one event. Delivery then routes to the
subscriptions that exist when the batch is claimed, as before.

`OutboxCommits`: per engine, how many committed units of work stored outbox rows. The notifier's
source compares it with its value when a claim found the outbox drained: a wake after a commit
that stored nothing is not a reason to read the database (`bootstrap._OutboxSource.quiet`).
"""

from __future__ import annotations

import builtins
import functools
import itertools
import threading
import weakref
from datetime import datetime
from typing import Any

from sqlalchemy import CursorResult, and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.engine import Engine

from vnfm.adapters.db import mappers, tables
from vnfm.adapters.db.repository import Tx
from vnfm.domain.access import DEFAULT_TENANT
from vnfm.domain.alarms import FM_NOTIFICATION_TYPES
from vnfm.domain.model import new_id, utcnow
from vnfm.domain.notifications import LCM_V2_KIND, PKGM_NOTIFICATION_TYPES
from vnfm.service.ports import OutboxEntry


class OutboxCommits:
    """A counter of the commits that stored outbox rows (one per engine: `outbox_commits`)."""

    __slots__ = ("_next", "count", "__weakref__")

    def __init__(self) -> None:
        self._next = itertools.count(1)  # next() is atomic under the GIL
        self.count = 0

    def committed(self) -> None:
        self.count = next(self._next)


_COMMITS: weakref.WeakKeyDictionary[Engine, OutboxCommits] = weakref.WeakKeyDictionary()
_COMMITS_LOCK = threading.Lock()


def outbox_commits(engine: Engine) -> OutboxCommits:
    """The commit counter of `engine`'s outbox (made on first use)."""
    found = _COMMITS.get(engine)
    if found is None:
        with _COMMITS_LOCK:
            found = _COMMITS.setdefault(engine, OutboxCommits())
    return found


def subscription_kinds(notification: dict[str, Any]) -> tuple[str, ...]:
    """The Subscription.kind values that may receive `notification` (the notifier routes by the
    same rule: adapters/notify/filters.notification_kind, a /vnflcm/v2 subscription gets LCM ones)."""
    ntype = notification.get("notificationType")
    if ntype in PKGM_NOTIFICATION_TYPES:
        return ("vnfpkgm",)
    if ntype in FM_NOTIFICATION_TYPES:
        return ("vnffm",)
    return ("vnflcm", LCM_V2_KIND)


_REMOVE = delete(tables.notification_outbox).where(tables.notification_outbox.c.id == bindparam("_id"))


@functools.lru_cache(maxsize=8)
def _insert_if_subscribed(kinds: tuple[str, ...]) -> Any:
    """INSERT of one outbox row, only while a subscription of `kinds` exists for `_tenant` (built
    once per kinds)."""
    t, s = tables.notification_outbox, tables.subscriptions
    anyone = (select(s.c.id).where(or_(*(s.c.kind == k for k in kinds)),
                                   s.c.tenant == bindparam("_tenant", type_=s.c.tenant.type)).exists())
    row = select(*(bindparam(c, type_=t.c[c].type) for c in ("id", "created_at", "owner", "body"))).where(anyone)
    # rowcount tells whether it was stored (SQLAlchemy keeps an INSERT's only when asked to)
    return insert(t).from_select(["id", "created_at", "owner", "body"], row).execution_options(preserve_rowcount=True)


@functools.lru_cache(maxsize=4)
def _claim_statement(dialect: str) -> Any:
    """The outbox claim (built once per dialect): rows of the owner not yet taken, and rows written
    or taken before `_old` (their process died), at most `_limit`, oldest first; taken by one
    UPDATE that returns them (PostgreSQL: candidates locked by others are skipped)."""
    t = tables.notification_outbox
    old = bindparam("_old", type_=t.c.created_at.type)
    cond = or_(
        and_(t.c.owner == bindparam("_owner", type_=t.c.owner.type), t.c.claimed_at.is_(None)),
        and_(t.c.claimed_at.is_(None), t.c.created_at < old),
        t.c.claimed_at < old,
    )
    candidates = select(t.c.id).where(cond).order_by(t.c.created_at, t.c.id).limit(bindparam("_limit"))
    if dialect == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    return (update(t).where(t.c.id.in_(candidates.scalar_subquery()), cond)
            .values(owner=bindparam("_owner"), claimed_at=bindparam("_now", type_=t.c.claimed_at.type))
            .returning(t.c.id, t.c.created_at, t.c.body))


class SqlOutbox:
    """The notification outbox (vnfm.service.ports.Outbox). `claim` takes rows with one conditional
    UPDATE ... RETURNING (candidates `FOR UPDATE SKIP LOCKED` on PostgreSQL), so each is taken once.
    `added`: rows stored in this unit of work (its commit counts in `OutboxCommits` when any)."""

    table = tables.notification_outbox

    def __init__(self, tx: Tx) -> None:
        self.tx = tx
        self.added = 0

    def _exec(self, stmt: Any, params: Any = None) -> CursorResult:
        return self.tx.conn().execute(stmt, params)

    def add(self, notification: dict[str, Any], info: dict[str, Any] | None = None, *, owner: str = "",
            tenant: str = DEFAULT_TENANT, if_subscribed: bool = False) -> bool:
        now = utcnow()
        body = {"notification": notification, "info": info, "published_at": mappers.iso(now), "tenant": tenant}
        row = {"id": new_id(), "created_at": now, "owner": owner or None, "body": body}
        if if_subscribed:
            stored = self._exec(_insert_if_subscribed(subscription_kinds(notification)),
                                {**row, "_tenant": tenant}).rowcount == 1
        else:
            self._exec(insert(self.table), {**row, "claimed_at": None})
            stored = True
        self.added += stored
        return stored

    def claim(self, owner: str, reclaim_before: Any, limit: int = 100) -> builtins.list[OutboxEntry]:
        """One statement: the rows taken, oldest first (an UPDATE of the candidates, returning them)."""
        if not isinstance(reclaim_before, datetime):
            raise TypeError("reclaim_before must be a datetime")
        params = {"_owner": owner, "_old": mappers.as_utc(reclaim_before), "_now": mappers.as_utc(utcnow()),
                  "_limit": limit}
        taken = self._exec(_claim_statement(self.tx.dialect), params).all()
        out: builtins.list[OutboxEntry] = []
        for entry_id, _created, body in sorted(taken, key=lambda r: (mappers.as_utc(r[1]), r[0])):
            out.append(OutboxEntry(entry_id, body["notification"], body.get("info"), body["published_at"],
                                   str(body.get("tenant") or DEFAULT_TENANT)))
        return out

    def remove(self, entry_id: str) -> None:
        self._exec(_REMOVE, {"_id": entry_id})

    def count(self) -> int:
        return int(self._exec(select(func.count()).select_from(self.table)).scalar_one())
