"""`vnfm healthcheck`: the server of these settings answers /healthz (or /readyz), else one line
and exit 1; a bad setting is exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.unit.cli.cli_fake import start_server
from vnfm.entrypoints.cli.commands.healthcheck import probe_url
from vnfm.entrypoints.cli.main import cli


def check(monkeypatch: pytest.MonkeyPatch, port: str, *args: str) -> Result:
    for k in ("VNFM_CONFIG", "VNFM_HOST", "VNFM_TLS_CERT", "VNFM_TLS_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("VNFM_PORT", port)
    return CliRunner().invoke(cli, ["healthcheck", *args])


def test_up_ready_then_down(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    handle = start_server(tmp_path / "data")
    port = handle.url.rsplit(":", 1)[1]
    try:
        res = check(monkeypatch, port)
        assert res.exit_code == 0 and res.stdout.strip() == f"ok: http://127.0.0.1:{port}/healthz"
        res = check(monkeypatch, port, "--ready")
        assert res.exit_code == 0 and res.stdout.strip().endswith("/readyz")
    finally:
        handle.stop()
    res = check(monkeypatch, port, "--timeout", "2")
    assert res.exit_code == 1
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"unhealthy: http://127.0.0.1:{port}/healthz: ConnectError")


def test_a_bad_setting_is_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    res = check(monkeypatch, "not-a-port")
    assert res.exit_code == 2 and res.stderr.startswith("Error: setting port (env VNFM_PORT)")


def test_the_url_of_a_wildcard_address_is_loopback() -> None:
    assert probe_url("0.0.0.0", 9890, True, "/healthz") == "https://127.0.0.1:9890/healthz"
    assert probe_url("::", 9890, False, "/readyz") == "http://[::1]:9890/readyz"
    assert probe_url("10.0.0.5", 1, False, "/healthz") == "http://10.0.0.5:1/healthz"
