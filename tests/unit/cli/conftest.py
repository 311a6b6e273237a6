from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.cli.cli_fake import FakeVnfm, start_server


@pytest.fixture
def fake() -> FakeVnfm:
    return FakeVnfm()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    """The real API server in this process (a fresh data dir)."""
    handle = start_server(tmp_path / "data")
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def server_url(server: Any) -> str:
    return str(server.url)
