from __future__ import annotations

from collections.abc import Iterator

import pytest

from .receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    if r.gate is not None:
        r.gate.set()
    r.stop()
