"""The simulated cloud's store lock is bounded across a pause (issue 24 item 3): a server paused
(SIGSTOP) inside a write transaction holds SQLite's lock until it resumes; another server on the
same state waits at most `lock_timeout` for it, then refuses (StoreBusy) and, for one more bound,
refuses at once instead of waiting again; once the holder resumes and commits, writes go on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from vnfm.adapters.infra.simulator.store import StateStore, StoreBusy

BOUND = 0.5
# A server inside a write transaction of the store (SQLite's write lock, as `StateStore.begin`
# takes it): it writes a record, says so, and commits when told.
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO deployments (instance_id, doc) VALUES ('held-by-the-paused-server', ?)",
             ('{"deployment":null,"ports":{},"floating_ips":{},"servers":{},"volumes":{}}',))
print("held", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
print("committed", flush=True)
"""


def test_a_paused_holder_stalls_another_process_at_most_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "simcloud.db"
    store = StateStore(path, lock_timeout=BOUND)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        os.kill(holder.pid, signal.SIGSTOP)  # paused inside its transaction, the lock held

        started = time.monotonic()
        with pytest.raises(StoreBusy, match="locked by another process"), store.begin() as tx:
            tx.create_doc("mine")
        waited = time.monotonic() - started
        assert BOUND * 0.8 <= waited < BOUND + 1.0

        started = time.monotonic()  # within the next bound: refused without waiting again
        with pytest.raises(StoreBusy), store.begin() as tx:
            tx.create_doc("mine")
        assert time.monotonic() - started < BOUND * 0.8

        with store.begin(write=False) as tx:  # reads never wait for a writer
            assert tx.doc("held-by-the-paused-server") is None

        os.kill(holder.pid, signal.SIGCONT)
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "committed"
        with store.begin() as tx:  # the holder is done: writes go on, and see its commit
            assert tx.doc("held-by-the-paused-server") is not None
            tx.create_doc("mine")
        with store.begin(write=False) as tx:
            assert tx.doc("mine") is not None
    finally:
        os.kill(holder.pid, signal.SIGCONT)
        holder.kill()
        holder.wait(timeout=10)


def test_a_thread_waits_for_another_threads_transaction_at_most_the_bound(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "simcloud.db", lock_timeout=BOUND)
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.begin() as tx:
            tx.create_doc("slow")
            inside.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert inside.wait(10)
        started = time.monotonic()
        with pytest.raises(StoreBusy, match="locked by another thread"), store.begin():
            pass
        assert BOUND * 0.8 <= time.monotonic() - started < BOUND + 1.0
    finally:
        release.set()
        t.join(10)
    with store.begin() as tx:  # a transaction that joins its thread's own never waits
        with store.begin() as inner:
            assert inner is tx
        assert tx.doc("slow") is not None
