"""The CLI's OAuth 2.0 client credentials (a token fetched, cached 0600, refetched after a 401)
and client certificates, against a real server."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.api.conftest import settings_for
from tests.api.test_mtls import make_pki
from tests.api.test_oauth2 import SECRETS, clients
from vnfm.entrypoints.api.server import ServerHandle, start_in_thread
from vnfm.entrypoints.cli.main import cli


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerHandle]:
    handle = start_in_thread(settings_for(tmp_path / "data", port=0, oauth2_clients=clients("ops-a")))
    try:
        yield handle
    finally:
        handle.stop()


def _run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], secret: str | None) -> Result:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for k in ("VNFM_TOKEN", "VNFM_CLIENT_ID", "VNFM_CLIENT_CERT", "VNFM_CLIENT_KEY", "VNFM_CACERT"):
        monkeypatch.delenv(k, raising=False)
    if secret is None:
        monkeypatch.delenv("VNFM_CLIENT_SECRET", raising=False)
    else:
        monkeypatch.setenv("VNFM_CLIENT_SECRET", secret)
    return CliRunner().invoke(cli, args)


def test_the_cli_gets_caches_and_renews_tokens(server: ServerHandle, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    base = ["--endpoint", server.url, "--client-id", "ops-a"]
    res = _run(monkeypatch, tmp_path, [*base, "package", "list", "-o", "json"], SECRETS["ops-a"])
    assert res.exit_code == 0, res.output
    cache = tmp_path / "cache" / "vnfm" / "tokens.json"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    first = json.loads(cache.read_text())
    (entry,) = first.values()
    res = _run(monkeypatch, tmp_path, [*base, "package", "create", "-o", "json"], SECRETS["ops-a"])
    assert res.exit_code == 0, res.output
    assert json.loads(cache.read_text()) == first  # the cached token served
    entry["token"] = "revoked-or-garbage"
    cache.write_text(json.dumps({k: entry for k in first}))
    res = _run(monkeypatch, tmp_path, [*base, "package", "list", "-o", "json"], SECRETS["ops-a"])
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.output)) == 1
    assert list(json.loads(cache.read_text()).values())[0]["token"] != "revoked-or-garbage"

    res = _run(monkeypatch, tmp_path / "other", [*base, "package", "list"], "wrong-secret-value")
    out = res.output
    assert res.exit_code == 1 and "no token" in out and "invalid_client" in out
    assert "wrong-secret-value" not in out
    res = _run(monkeypatch, tmp_path, [*base, "package", "list"], None)
    assert res.exit_code == 2 and "VNFM_CLIENT_SECRET" in res.output
    res = _run(monkeypatch, tmp_path, ["--endpoint", server.url, "package", "list"], None)
    assert res.exit_code == 1 and "401" in res.output


def test_the_cli_presents_a_client_certificate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    handle = start_in_thread(settings_for(
        tmp_path / "data", port=0, tls_cert=pki.server[0], tls_key=pki.server[1], tls_client_ca=pki.ca,
        mtls_clients=[{"common_name": "nfvo-cert", "roles": ["reader"], "tenant": "t"}]))
    try:
        tls = ["--endpoint", handle.url, "--cacert", str(pki.ca)]
        res = _run(monkeypatch, tmp_path, [*tls, "--cert", str(pki.good[0]), "--key", str(pki.good[1]),
                                           "vnf", "list", "-o", "json"], None)
        assert res.exit_code == 0 and json.loads(res.output) == [], res.output
        res = _run(monkeypatch, tmp_path, [*tls, "vnf", "list"], None)  # no certificate: no handshake
        assert res.exit_code == 1
    finally:
        handle.stop()
