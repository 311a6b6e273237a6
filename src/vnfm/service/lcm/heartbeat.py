"""The heartbeat of one engine: a thread of its own renewing, in one statement per beat, the
heartbeat of every occurrence the process owns (`Liveness.beat`), whatever the event loop and the
worker threads are busy with.

Timing: a beat every `orphan_after / BEATS_PER_TAKEOVER` seconds, so another process takes an
occurrence over only after this many beats in a row failed or were late. Every beat's lag (the
time since the previous successful beat) is measured: `stats()` gives the last and the largest,
and a lag past half the takeover time is logged as a warning (the process is starved).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from vnfm.domain.model import utcnow
from vnfm.service.ports import Beat, Liveness

log = logging.getLogger(__name__)

BEATS_PER_TAKEOVER = 6  # takeover time (VNFM_ORPHAN_AFTER) = this many beat intervals
MIN_INTERVAL = 0.05


@dataclass
class BeatStats:
    interval: float  # the configured beat interval (seconds)
    last_lag: float = 0.0  # seconds between the last two successful beats
    max_lag: float = 0.0  # the largest such gap since the start (or the last reset)
    beats: int = 0
    failures: int = 0


class Heartbeat:
    """Beats `owned()` as `owner` every `interval` seconds on its own thread; `on_beat(beat, ids)`
    is called (on that thread) with what each beat found and the ids it was asked about."""

    def __init__(self, liveness: Liveness, owner: str, orphan_after: float, *,
                 owned: Callable[[], list[str]], on_beat: Callable[[Beat, list[str]], None]) -> None:
        self.liveness = liveness
        self.owner = owner
        self.orphan_after = orphan_after
        self.stats = BeatStats(interval=max(orphan_after / BEATS_PER_TAKEOVER, MIN_INTERVAL))
        self._owned = owned
        self._on_beat = on_beat
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_ok = time.monotonic()
        self._beat_lock = threading.Lock()  # one beat at a time (the thread's, or `beat_now`'s)
        self._halted = False  # stopped: no beat at all (a beat in flight ends before `stop` returns)

    def start(self) -> None:
        self._halted = False
        self._stop.clear()
        self._last_ok = time.monotonic()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{self.owner}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        with self._beat_lock:  # a `beat_now` in flight (recovery, a cancel) ends first
            self._halted = True

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.wait(self.stats.interval):
            try:
                self.beat_now()
            except Exception:  # the database is briefly unavailable: the next beat tries again
                self.stats.failures += 1
                log.exception("heartbeat failed")

    def beat_now(self) -> Beat | None:
        """One beat now (thread-safe, blocking): None when nothing is owned."""
        with self._beat_lock:
            ids = [] if self._halted else self._owned()
            now = time.monotonic()
            if not ids:
                self._last_ok = now
                return None
            beat = self.liveness.beat(self.owner, ids, utcnow())
            done = time.monotonic()
            self._measure(done - self._last_ok)
            self._last_ok = done
        self._on_beat(beat, ids)
        return beat

    def _measure(self, lag: float) -> None:
        s = self.stats
        s.beats += 1
        s.last_lag = lag
        s.max_lag = max(s.max_lag, lag)
        if lag > self.orphan_after / 2:
            log.warning("heartbeat %.1fs late (takeover after %.1fs without one): this process is starved",
                        lag, self.orphan_after)
