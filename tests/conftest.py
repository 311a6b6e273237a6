"""Suite-wide fixtures.

`vnfm server` and `vnfm healthcheck` run in-process in some tests and configure logging the way the
real process does (`logsetup.configure_logging`: the vnfm/uvicorn/asyncio loggers stop
propagating). Left so, every later test that reads log records through pytest's caplog (attached
to the root logger) would see none: the loggers' state is put back after every test."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

LOGGERS = ("vnfm", "uvicorn", "uvicorn.error", "uvicorn.access", "asyncio")


@pytest.fixture(autouse=True)
def _loggers_as_they_were() -> Iterator[None]:
    saved = {n: (lg.level, list(lg.handlers), lg.propagate, lg.disabled)
             for n in LOGGERS for lg in (logging.getLogger(n),)}
    yield
    for n, (level, handlers, propagate, disabled) in saved.items():
        lg = logging.getLogger(n)
        lg.setLevel(level)
        lg.handlers[:] = handlers
        lg.propagate = propagate
        lg.disabled = disabled
