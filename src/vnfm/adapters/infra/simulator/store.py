"""Where the simulated cloud keeps its state: SQLite, in a file of the data dir or in memory.

Every operation of the cloud is one transaction that reads and writes only the records it needs
(see `tx.py` for the layout: one document per VNF instance, plus a few shared rows):

    with store.begin() as tx:
        doc = tx.doc(instance_id)
        doc["servers"][sid]["status"] = "ACTIVE"

Leaving the block normally commits; an exception rolls everything back. Code inside a transaction
must not await (the store's lock is a plain threading lock). Several processes share a file:
SQLite in WAL mode serialises writers (`BEGIN IMMEDIATE`) while readers read the last commit; a
killed writer leaves nothing half-written (its transaction is rolled back when the file is next
opened) and no temporary file.

The wait for the write lock is bounded (`lock_timeout`, VNFM_SIM_LOCK_TIMEOUT, 5 s): a server
paused (SIGSTOP, a stopped VM) inside a transaction holds SQLite's lock until it resumes, and a
lock held by a process cannot be broken from outside. So the other servers do not wait for it
beyond the bound: `begin` raises `StoreBusy` (the operation's stage fails, `retry` resumes it),
and for one more `lock_timeout` after such a timeout every write tries once without waiting, so
a paused holder stalls a server (whose transactions run on its event loop) once per bound, not
once per waiting transaction.

`read()` and `transaction()` are the old whole-state interface (one dict of every record, as
`SimCloud.state()` shows it): they read, and rewrite, everything. Tests, tools and migration only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vnfm.adapters.infra.simulator import legacy
from vnfm.adapters.infra.simulator.model import SimCloudError
from vnfm.adapters.infra.simulator.tx import Tx, Views

LOCK_TIMEOUT = 5.0  # seconds a write waits for the store's lock (VNFM_SIM_LOCK_TIMEOUT)

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS deployments (instance_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS extras (instance_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS networks (
    id TEXT PRIMARY KEY, instance_id TEXT, lo INTEGER NOT NULL, hi INTEGER NOT NULL,
    next_low INTEGER NOT NULL, next_high INTEGER NOT NULL, gateway TEXT, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS networks_range ON networks (lo, hi);
CREATE INDEX IF NOT EXISTS networks_instance ON networks (instance_id);
CREATE INDEX IF NOT EXISTS networks_gateway ON networks (gateway);
CREATE TABLE IF NOT EXISTS addresses (
    address TEXT PRIMARY KEY, network_id TEXT NOT NULL, instance_id TEXT NOT NULL,
    kind TEXT NOT NULL, ref TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS addresses_network ON addresses (network_id, kind);
CREATE TABLE IF NOT EXISTS servers (
    id TEXT PRIMARY KEY, instance_id TEXT NOT NULL, vnfc_id TEXT NOT NULL, name TEXT NOT NULL,
    reachable INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS servers_instance ON servers (instance_id);
CREATE INDEX IF NOT EXISTS servers_vnfc ON servers (vnfc_id);
CREATE INDEX IF NOT EXISTS servers_name ON servers (name);
CREATE INDEX IF NOT EXISTS servers_unreachable ON servers (reachable) WHERE reachable = 0;
CREATE TABLE IF NOT EXISTS macs (mac TEXT PRIMARY KEY, instance_id TEXT NOT NULL);
"""


class StoreBusy(SimCloudError):
    """The store's write lock was held by another transaction (a paused process) past the bound."""


class StateStore:
    """The simulated cloud's state in SQLite at `path` (":memory:": this process only)."""

    def __init__(self, path: Path | str, *, fsync: bool = False, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.path = path if str(path) == ":memory:" else Path(path)
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            legacy.remove_leftovers(self.path.parent)
            # owner-only, like the rest of the data dir's state (SQLite gives its -wal and -shm
            # files the database file's mode)
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        self._lock = threading.RLock()
        self._local = threading.local()
        self._views = Views()  # parsed documents of recent look-ups (tx.py), used under the lock
        self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=60)
        self._conn.execute("PRAGMA busy_timeout = 60000")
        if isinstance(self.path, Path):
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(f"PRAGMA synchronous = {'FULL' if fsync else 'NORMAL'}")
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    self._conn.execute(statement)
                self._conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)",
                                   (str(SCHEMA_VERSION),))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        self.lock_timeout = lock_timeout
        self._busy_until = 0.0  # monotonic: until then a write tries once, without waiting
        self._busy_ms = -1
        self._wait(lock_timeout)

    def _wait(self, seconds: float) -> None:
        ms = int(seconds * 1000)
        if ms != self._busy_ms:
            self._conn.execute(f"PRAGMA busy_timeout = {ms}")
            self._busy_ms = ms

    def _busy(self, what: str) -> StoreBusy:
        self._busy_until = time.monotonic() + self.lock_timeout
        return StoreBusy(f"the simulated cloud's state is locked by another {what} for over "
                         f"{self.lock_timeout:g} s (a paused server?): not waiting longer; retry the operation")

    def _acquire(self) -> None:
        """This process's lock, waiting at most `lock_timeout` (no wait at all just after a timeout)."""
        wait = 0.0 if time.monotonic() < self._busy_until else self.lock_timeout
        got = self._lock.acquire(timeout=wait) if wait > 0 else self._lock.acquire(blocking=False)
        if not got:
            raise self._busy("thread")

    def _begin_write(self) -> None:
        """`BEGIN IMMEDIATE`, waiting for another process's write at most `lock_timeout`."""
        self._wait(0.0 if time.monotonic() < self._busy_until else self.lock_timeout)
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            raise self._busy("process") from None
        self._busy_until = 0.0

    @contextlib.contextmanager
    def begin(self, *, write: bool = True) -> Iterator[Tx]:
        """A transaction (`write=False`: a consistent read, nothing written). A transaction begun
        inside another one of the same thread joins it."""
        current: Tx | None = getattr(self._local, "tx", None)
        if current is not None:  # this thread holds the lock already
            if write and not current.writable:
                raise RuntimeError("a write transaction cannot join a read transaction")
            current.joined += 1
            try:
                yield current
            finally:
                current.joined -= 1
            return
        self._acquire()
        try:
            if write:
                self._begin_write()
            else:
                self._conn.execute("BEGIN")
            tx = Tx(self._conn, write, self._views)
            self._local.tx = tx
            try:
                yield tx
                if write:
                    tx.flush()
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._local.tx = None
        finally:
            self._lock.release()

    # ------------------------------------------------------------------ whole state (tests, tools)
    def read(self) -> dict[str, Any]:
        """A private copy of the whole state, as one dict (reads every record)."""
        with self.begin(write=False) as tx:
            return legacy.export_state(tx)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """Yield the whole state as one dict; write it all back when the block ends normally."""
        with self.begin() as tx:
            state = legacy.export_state(tx)
            yield state
            legacy.import_state(tx, state)

    def import_json_file(self, json_path: Path) -> bool:
        """Load a state file of the JSON store this one replaced, once: when this store is still
        empty. The file is then renamed `<name>.migrated`. True when something was imported."""
        return legacy.migrate_json_file(self, json_path)

    def checkpoint(self) -> None:
        """Move what the write-ahead log holds into the database file and truncate the log."""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class MemoryStateStore(StateStore):
    """The state of one process (tests, the embedded server without persistence)."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        super().__init__(":memory:")
        if initial:
            with self.begin() as tx:
                legacy.import_state(tx, initial)
