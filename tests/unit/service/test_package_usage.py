"""A package's usage state is written when it changes, not by every instance created from it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from vnfm.domain.model import UsageState

from .conftest import Harness


def test_usage_is_written_once_per_change(h: Harness) -> None:
    updates: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE VNF_PACKAGES"):
            updates.append(statement)

    event.listen(Engine, "before_cursor_execute", count)
    try:
        for _ in range(3):
            h.app.instances.create({"vnfdId": h.vnfd_id})
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    assert len(updates) == 1  # NOT_IN_USE -> IN_USE; the next two instances change nothing
    assert h.app.packages.get(h.pkg_id).usage_state == UsageState.IN_USE
    h.app.packages.set_usage(h.pkg_id, False)
    assert h.app.packages.get(h.pkg_id).usage_state == UsageState.NOT_IN_USE
