"""The server process's garbage collector policy (`entrypoints/gcpolicy.py`)."""

from __future__ import annotations

import subprocess
import sys


def test_settle_freezes_the_imports_and_collects_less_often() -> None:
    """Run in a child process: freezing and thresholds are process-wide, not for the test run's."""
    code = ("import gc, vnfm.entrypoints.api.server as s\n"
            "before = gc.get_threshold()\n"
            "s.settle()\n"
            "print(before[0], gc.get_threshold()[0], gc.get_freeze_count())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    before, after, frozen = map(int, out.stdout.split())
    assert before == 700 and after == 50_000
    assert frozen > 10_000  # the imports (FastAPI, SQLAlchemy, vnfm) are out of the collector's sight
