"""Engines and session factories for SQLite (default, embedded) and PostgreSQL (psycopg 3).

SQLite: WAL journal, busy_timeout 30 s, foreign keys on, usable from any thread, and every
transaction starts with `BEGIN IMMEDIATE`, sent by the driver itself (except on a connection in
AUTOCOMMIT: read-only queries, which take no lock): a unit of work takes the write lock up front,
so a read-modify-write never fails half-way with "database is locked" when another process wrote in
between (readers in other processes are not blocked thanks to WAL, but units of work are
serialised). PostgreSQL: READ COMMITTED, pool_pre_ping; the repositories use row locks and
conditional updates where atomicity matters.

Bounded waits (`DbLimits`, from the settings): on PostgreSQL every session has a `lock_timeout`,
a `statement_timeout` and an `idle_in_transaction_session_timeout` (a process paused inside a
transaction loses it, and its row locks, after that long); the pool is bounded (`pool_size` +
`max_overflow`; on PostgreSQL overflow connections linger while used: `pool.LingeringPool`) and a
request that cannot get a connection within `pool_timeout` fails at once
(SQLite: within the busy timeout, as long as a connection holder may wait for the write lock).
`is_busy(exc)` tells these apart from other errors: the API answers them 503 with Retry-After.
"""

from __future__ import annotations

import contextlib
import enum
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from vnfm.adapters import jsoncodec
from vnfm.adapters.db.pool import LingeringPool

DEFAULT_DATABASE_URL = "sqlite:///var/vnfm.db"
SQLITE_BUSY_TIMEOUT_MS = 30000  # a bound, high enough for thousands of operations writing at once


@dataclass(frozen=True)
class DbLimits:
    """How long anything may wait on the database (seconds), and the pool's bounds."""

    lock_timeout: float = 5.0
    statement_timeout: float = 30.0
    idle_in_transaction_timeout: float = 10.0
    pool_size: int = 10
    max_overflow: int = 10
    pool_timeout: float = 5.0

    def pg_options(self) -> str:
        ms = {"lock_timeout": self.lock_timeout, "statement_timeout": self.statement_timeout,
              "idle_in_transaction_session_timeout": self.idle_in_transaction_timeout}
        return " ".join(f"-c {k}={int(v * 1000)}" for k, v in ms.items())


# PostgreSQL SQLSTATEs of a bounded wait that expired: lock_not_available, query_canceled,
# idle_in_transaction_session_timeout; and too_many_connections (the server's max_connections
# reached: more processes x pool connections than it allows), as the message says it when the
# connection itself is refused.
_BUSY_SQLSTATES = {"55P03", "57014", "25P03", "53300"}
_BUSY_MESSAGES = ("database is locked", "too many clients already")


# the exception classes `is_busy` may accept (an API registers its 503 handler for these)
DB_ERRORS: tuple[type[Exception], ...] = (sa_exc.TimeoutError, sa_exc.DBAPIError)


def is_busy(exc: BaseException) -> bool:
    """The database was too busy to answer within a bound (no pool connection in time, a lock or
    statement timeout, SQLite's busy timeout): worth retrying later, not a server fault."""
    if isinstance(exc, sa_exc.TimeoutError):
        return True
    if isinstance(exc, sa_exc.OperationalError | sa_exc.DBAPIError):
        orig = getattr(exc, "orig", None)
        if getattr(orig, "sqlstate", None) in _BUSY_SQLSTATES:
            return True
        return any(m in str(orig) for m in _BUSY_MESSAGES)
    return False


def database_url_from_env(default: str = DEFAULT_DATABASE_URL) -> str:
    """VNFM_DATABASE_URL, else `default` (SQLite in ./var)."""
    return os.environ.get("VNFM_DATABASE_URL") or default


def normalize_url(url: str | URL) -> URL:
    """`postgresql://` / `postgres://` use psycopg 3; other URLs are kept as they are."""
    u = make_url(url)
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    return u


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"value of type {type(value).__name__} is not JSON serialisable")


def json_dumps(value: Any) -> str:
    return jsoncodec.dumps(value, _json_default)


def _is_memory_sqlite(u: URL) -> bool:
    db = u.database or ""
    return db in ("", ":memory:") or db.startswith("file::memory:") or "mode=memory" in db


def is_memory_url(url: str | URL) -> bool:
    """An in-memory SQLite database (one connection, not shared between engines)."""
    u = normalize_url(url)
    return u.get_backend_name() == "sqlite" and _is_memory_sqlite(u)


def make_engine(url: str | URL | None = None, limits: DbLimits | None = None, **kwargs: Any) -> Engine:
    """An Engine for `url` (default: VNFM_DATABASE_URL, else sqlite:///var/vnfm.db); `limits`:
    bounded waits and pool (none given: the driver's and SQLAlchemy's defaults)."""
    u = normalize_url(url or database_url_from_env())
    memory = u.get_backend_name() == "sqlite" and _is_memory_sqlite(u)
    if limits is not None and not memory:
        kwargs.setdefault("pool_size", limits.pool_size)
        kwargs.setdefault("max_overflow", limits.max_overflow)
        # SQLite: every unit of work begins with BEGIN IMMEDIATE, so a pooled connection is a place
        # in the one write lock's queue: it is waited for as long as the lock is (busy timeout)
        sqlite_wait = SQLITE_BUSY_TIMEOUT_MS / 1000 if u.get_backend_name() == "sqlite" else 0.0
        kwargs.setdefault("pool_timeout", max(limits.pool_timeout, sqlite_wait))
    if u.get_backend_name() == "sqlite":
        return _sqlite_engine(u, **kwargs)
    kwargs.setdefault("pool_pre_ping", True)
    if limits is not None:
        if limits.max_overflow > 0:  # overflow connections kept while used, not reopened per unit of work
            kwargs.setdefault("poolclass", LingeringPool)
        connect_args = dict(kwargs.pop("connect_args", {}))
        connect_args.setdefault("options", limits.pg_options())
        kwargs["connect_args"] = connect_args
    return create_engine(u, json_serializer=json_dumps, json_deserializer=jsoncodec.loads, **kwargs)


def _sqlite_engine(u: URL, **kwargs: Any) -> Engine:
    memory = _is_memory_sqlite(u)
    if not memory and u.database:
        Path(u.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        private_files(Path(u.database).expanduser())
    connect_args = dict(kwargs.pop("connect_args", {}))
    connect_args.setdefault("check_same_thread", False)
    connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_MS / 1000)
    if memory:
        # One shared connection: only for single-threaded use (tests, throwaway runs).
        kwargs.setdefault("poolclass", StaticPool)
    engine = create_engine(u, json_serializer=json_dumps, json_deserializer=jsoncodec.loads,
                           connect_args=connect_args, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy emits BEGIN itself (below); the driver must not start transactions.
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            if not memory:
                cur.execute("PRAGMA journal_mode = WAL")
                cur.execute("PRAGMA synchronous = NORMAL")
            cur.execute("PRAGMA foreign_keys = ON")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        if conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            return  # a read-only connection (the metrics' counts): no transaction, no write lock
        # The driver's own execute (SQLAlchemy's statement path, events and result set-up, costs
        # ten times this statement; every unit of work runs it); its error as SQLAlchemy's, as
        # `is_busy` and the callers expect it (here SQLAlchemy does not wrap it).
        try:
            conn.connection.driver_connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise sa_exc.DBAPIError.instance("BEGIN IMMEDIATE", (), exc, sqlite3.Error) from exc

    return engine


def private_files(db: Path) -> None:
    """The database file (and its WAL / shared-memory files, which SQLite creates with the
    database's mode) readable by the owner only: created 0600, an existing one tightened."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(db, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        try:
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)
        except (FileNotFoundError, PermissionError):
            pass


def make_session_factory(url_or_engine: str | URL | Engine | None = None,
                         limits: DbLimits | None = None) -> sessionmaker[Session]:
    """Sessions for SqlAlchemyUnitOfWork (no expiry on commit, no autoflush: Core statements only)."""
    engine = url_or_engine if isinstance(url_or_engine, Engine) else make_engine(url_or_engine, limits)
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=False)


def ping(factory: sessionmaker[Session]) -> None:
    """Raise unless the database answers `SELECT 1` (a raw connection: no transaction is begun,
    so SQLite's write lock is not taken)."""
    bind = factory.kw["bind"]
    raw = bind.raw_connection()
    try:
        cur = raw.cursor()
        try:
            cur.execute("SELECT 1")
            cur.fetchall()
        finally:
            cur.close()
    finally:
        raw.close()


def ping_url(url: str, timeout: float = 5.0) -> None:
    """Raise unless the database at `url` answers within about `timeout` seconds (server start-up)."""
    u = normalize_url(url)
    kwargs: dict[str, Any] = {}
    if u.get_backend_name() != "sqlite":
        kwargs["connect_args"] = {"connect_timeout": max(1, int(timeout))}
    engine = make_engine(u, **kwargs)
    try:
        ping(sessionmaker(bind=engine))
    finally:
        engine.dispose()
