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
        self._lock = threading.RLock()

    def read(self) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self._state)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        with self._lock:
            work = copy.deepcopy(self._state)
            yield work
            self._state = work


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

    def _load(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return empty_state()
        if not text.strip():
            return empty_state()
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"simulated cloud state file {self.path} does not hold a JSON object")
        return normalize(data)

    def _write(self, state: dict[str, Any]) -> None:
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(state, fh, indent=1, sort_keys=True)
                fh.flush()
                if self.fsync:
                    os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    def read(self) -> dict[str, Any]:
        return self._load()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        with self._thread_lock, open(self.lock_path, "a+b") as lock_fh:
            fcntl.flock(lock_fh.fileno(), fcntl.LOCK_EX)
            try:
                state = self._load()
                yield state
                self._write(state)
            finally:
                fcntl.flock(lock_fh.fileno(), fcntl.LOCK_UN)
