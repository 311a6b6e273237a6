"""`vnfm server`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vnfm.entrypoints.cli.main import cli


def test_server_command_passes_options_to_serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import types

    monkeypatch.delenv("VNFM_DATABASE_URL", raising=False)
    seen: list[Any] = []
    fake_mod = types.ModuleType("vnfm.entrypoints.api.server")
    fake_mod.serve = seen.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vnfm.entrypoints.api.server", fake_mod)
    res = CliRunner().invoke(
        cli, ["server", "--host", "0.0.0.0", "--port", "9999", "--data-dir", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    (settings,) = seen
    assert (settings.host, settings.port, settings.data_dir) == ("0.0.0.0", 9999, tmp_path)
    assert settings.database_url == f"sqlite:///{tmp_path / 'vnfm.db'}"
    res = CliRunner().invoke(cli, ["server", "--database-url", "sqlite:///x.db"])
    assert seen[-1].database_url == "sqlite:///x.db"
