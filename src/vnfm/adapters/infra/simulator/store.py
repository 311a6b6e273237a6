"""Where the simulated cloud keeps its state: in memory, or in a JSON file shared by processes.

The state is one JSON-ready dict. Every mutation is a small transaction:

    with store.transaction() as state:
        state["servers"][sid]["status"] = "ACTIVE"

Leaving the block normally commits; an exception discards every change made inside it. Code inside
a transaction must not await (the in-process lock is a plain threading lock).
"""

from __future__ import annotations

import abc
import contextlib
import copy
import fcntl
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


def empty_state() -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "networks": {},
        "ports": {},
        "floating_ips": {},
        "servers": {},
        "volumes": {},
        "deployments": {},
        "extras": {},
        "faults": {},
    }


def normalize(state: dict[str, Any]) -> dict[str, Any]:
    """Fill the top-level keys a (possibly older or empty) state lacks."""
    for key, value in empty_state().items():
        state.setdefault(key, value)
    return state


class StateStore(abc.ABC):
    """Holds the cloud's state and runs read-modify-write transactions on it."""

    @abc.abstractmethod
    def read(self) -> dict[str, Any]:
        """A private copy of the current state (changing it changes nothing)."""

    @abc.abstractmethod
    def transaction(self) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """Yield the state to mutate; commit when the block ends without an exception."""


class MemoryStateStore(StateStore):
    """The state of one process (tests, the embedded server without persistence)."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self._state = normalize(copy.deepcopy(initial) if initial else empty_state())
        # The committed state as JSON text: private copies and rollbacks are parsed from it
        # (json is much faster than copy.deepcopy on this kind of data).
        self._text = _dumps(self._state)
        self._lock = threading.RLock()

    def read(self) -> dict[str, Any]:
        with self._lock:
            return json.loads(self._text)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        with self._lock:
            try:
                yield self._state
            except BaseException:
                self._state = json.loads(self._text)
                raise
            self._text = _dumps(self._state)


def _dumps(state: dict[str, Any]) -> str:
    return json.dumps(state, separators=(",", ":"), sort_keys=True)


class JsonFileStateStore(StateStore):
    """The state in one JSON file: several processes share it and it survives a restart.

    Writers take an exclusive `fcntl.flock` on a side lock file (`<file>.lock`) for the whole
    read-modify-write, then replace the file atomically (temporary file in the same directory +
    `os.replace`), so readers never see a half-written file and need no lock.
    """

    def __init__(self, path: Path | str, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.fsync = fsync
        self._thread_lock = threading.RLock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The last state this process read or wrote, and the file identity it came from: while the
        # file is unchanged (no other process wrote), transactions reuse it instead of re-parsing.
        self._cache: tuple[tuple[int, int, int], str, dict[str, Any]] | None = None

    def _identity(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load_text(self) -> tuple[str, tuple[int, int, int] | None]:
        ident = self._identity()
        if ident is not None and self._cache is not None and self._cache[0] == ident:
            return self._cache[1], ident
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return "", None
        return text, self._identity()

    def _parse(self, text: str) -> dict[str, Any]:
        if not text.strip():
            return empty_state()
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"simulated cloud state file {self.path} does not hold a JSON object")
        return normalize(data)

    def _load(self) -> dict[str, Any]:
        ident = self._identity()
        if ident is not None and self._cache is not None and self._cache[0] == ident:
            return self._cache[2]
        text, ident = self._load_text()
        state = self._parse(text)
        if ident is not None:
            self._cache = (ident, text, state)
        return state

    def _write(self, state: dict[str, Any]) -> None:
        text = _dumps(state)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                if self.fsync:
                    os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            self._cache = None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        ident = self._identity()
        self._cache = (ident, text, state) if ident is not None else None

    def read(self) -> dict[str, Any]:
        with self._thread_lock:
            text, _ = self._load_text()
            return self._parse(text)  # a private copy: parsed from the text, not the cached object

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        with self._thread_lock, open(self.lock_path, "a+b") as lock_fh:
            fcntl.flock(lock_fh.fileno(), fcntl.LOCK_EX)
            try:
                state = self._load()
                try:
                    yield state
                except BaseException:
                    self._cache = None  # the cached object may hold half a change: re-read next time
                    raise
                self._write(state)
            finally:
                fcntl.flock(lock_fh.fileno(), fcntl.LOCK_UN)
