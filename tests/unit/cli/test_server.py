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
    fake_mod.serve = lambda settings, sock=None: seen.append(settings)  # type: ignore[attr-defined]
    fake_mod.preflight = lambda settings: None  # type: ignore[attr-defined]
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


def test_a_password_in_database_url_on_the_command_line_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    res, seen = _start(monkeypatch, ["--database-url", "postgresql+psycopg://vnfm:hunter22@db/vnfm"], {})
    assert res.exit_code == 2 and not seen
    assert "VNFM_DATABASE_URL" in res.output and "hunter22" not in res.output


def _start(monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str], *, bind: bool = False) -> Any:
    """`vnfm server ...` with the real settings and pre-flight checks; serve() recorded, not run."""
    import vnfm.entrypoints.api.server as real

    seen: list[Any] = []

    def serve(settings: Any, sock: Any = None) -> None:
        seen.append(settings)
        if sock is not None:
            sock.close()

    monkeypatch.setattr(real, "serve", serve)
    if not bind:  # the port is not bound (9890 may be in use on this machine)
        monkeypatch.setattr(real, "bind", lambda host, port: None)
    for k in ("VNFM_DATABASE_URL", "VNFM_CONFIG", "VNFM_PORT", "VNFM_LOG_FORMAT", "VNFM_HOST", "VNFM_AUTH_TOKEN",
              "VNFM_ALLOW_INSECURE_NO_AUTH", "VNFM_OAUTH2_CLIENTS"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    res = CliRunner().invoke(cli, ["server", *args])
    return res, seen


def test_bad_settings_are_one_line_each_not_a_traceback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path)],
                       {"VNFM_PORT": "abc", "VNFM_LOG_FORMAT": "xml", "VNFM_ORPHAN_AFTER": "-1"})
    assert res.exit_code == 2 and not seen
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 3, lines
    assert any(ln.startswith("Error: setting port (env VNFM_PORT): ") and "'abc'" in ln for ln in lines)
    assert any("setting log_format (env VNFM_LOG_FORMAT)" in ln and "'human' or 'json'" in ln for ln in lines)
    assert any("setting orphan_after" in ln for ln in lines)
    assert "Traceback" not in res.output


def test_unwritable_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")  # a data dir below a file cannot be made (root can write anywhere else)
    res, seen = _start(monkeypatch, ["--data-dir", str(blocker / "data")], {})
    assert res.exit_code == 2 and not seen
    assert res.stderr.startswith(f"Error: setting data_dir (env VNFM_DATA_DIR): {blocker / 'data'} cannot be written")
    assert len(res.stderr.strip().splitlines()) == 1


def test_unreachable_postgresql_names_the_setting_not_the_password(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql+psycopg://vnfm:pw-s3cret@127.0.0.1:{port}/vnfm"
    res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path)], {"VNFM_DATABASE_URL": url})
    assert res.exit_code == 2 and not seen
    line = res.stderr.strip()
    assert line.startswith("Error: setting database_url (env VNFM_DATABASE_URL): postgresql+psycopg://***@127.0.0.1")
    assert "does not answer (OperationalError" in line
    assert "pw-s3cret" not in res.output and len(line.splitlines()) == 1


def test_config_file_then_env_then_options(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    conf = tmp_path / "vnfm.toml"
    conf.write_text(f'port = 9100\nhost = "0.0.0.0"\nlog_format = "json"\ndata_dir = "{tmp_path / "d"}"\n'
                    'auth_token = "dev-t0ken"\n')
    res, seen = _start(monkeypatch, ["--config", str(conf)], {})
    assert res.exit_code == 0, res.output
    got = seen[0]
    assert (got.port, got.host, got.log_format, got.data_dir) == (9100, "0.0.0.0", "json", tmp_path / "d")
    res, seen = _start(monkeypatch, ["--port", "9300"], {"VNFM_CONFIG": str(conf), "VNFM_PORT": "9200"})
    assert res.exit_code == 0, res.output
    assert seen[0].port == 9300 and seen[0].host == "0.0.0.0"
    res, seen = _start(monkeypatch, [], {"VNFM_CONFIG": str(conf), "VNFM_PORT": "9200"})
    assert seen[0].port == 9200
    res, seen = _start(monkeypatch, ["--config", str(tmp_path / "missing.toml")], {})
    assert res.exit_code == 2 and "missing.toml: not found" in res.stderr
    conf.write_text("port = [")
    res, seen = _start(monkeypatch, ["--config", str(conf)], {})
    assert res.exit_code == 2 and res.stderr.startswith(f"Error: config file {conf}: ")
    assert "Traceback" not in res.output


def test_tls_needs_cert_and_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path), "--tls-cert", str(tmp_path / "c.pem")], {})
    assert res.exit_code == 2 and "tls_cert and tls_key go together" in res.stderr
    res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path), "--tls-cert", str(tmp_path / "c.pem"),
                                     "--tls-key", str(tmp_path / "k.pem")], {})
    assert res.exit_code == 2 and "setting tls_cert (env VNFM_TLS_CERT)" in res.stderr


def test_unknown_key_in_the_config_file_is_named_not_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    conf = tmp_path / "vnfm.toml"
    conf.write_text(f'prot = 9100\ndata_dir = "{tmp_path / "d"}"\n')
    res, seen = _start(monkeypatch, ["--config", str(conf)], {})
    assert res.exit_code == 2 and not seen
    assert res.stderr.strip() == f"Error: config file {conf}: unknown setting 'prot' (did you mean 'port'?)"


def test_beyond_loopback_without_authentication_the_server_refuses_to_start(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path), "--host", "0.0.0.0"], {})
    assert res.exit_code == 2 and not seen
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("Error: setting host (env VNFM_HOST): listening on 0.0.0.0 needs authentication")
    assert "oauth2_clients" in line and "--insecure-no-auth" in line
    # loopback needs nothing (the embedded default); the loud opt-outs: the flag, the variable
    for args, env in ((["--host", "127.0.0.1"], {}), (["--host", "::1"], {}),
                      (["--host", "0.0.0.0", "--insecure-no-auth"], {}),
                      (["--host", "0.0.0.0"], {"VNFM_ALLOW_INSECURE_NO_AUTH": "1"}),
                      (["--host", "0.0.0.0"], {"VNFM_AUTH_TOKEN": "dev-t0ken"})):
        res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path), *args], env)
        assert res.exit_code == 0 and len(seen) == 1, (args, env, res.output)


def test_the_opt_out_is_loud(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    from vnfm.config import Settings
    from vnfm.entrypoints.api.server import warn_exposure

    warn_exposure(Settings(data_dir=tmp_path, host="0.0.0.0", allow_insecure_no_auth=True))
    assert sum("AUTHENTICATION IS OFF" in r.getMessage() for r in caplog.records) == 3
    caplog.clear()
    warn_exposure(Settings(data_dir=tmp_path, host="127.0.0.1"))
    assert not caplog.records


def test_a_port_in_use_is_said_before_the_engine_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path), "--port", str(port)], {}, bind=True)
    assert res.exit_code == 2 and not seen
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"Error: setting port (env VNFM_PORT): cannot listen on 127.0.0.1:{port} ")
    assert "another process listens there" in line


def test_a_tls_pair_that_does_not_load_is_said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tests.api.test_mtls import make_pki

    pki = make_pki(tmp_path)
    res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path / "d"), "--tls-cert", str(pki.server[0]),
                                     "--tls-key", str(pki.good[1])], {})  # the key of another certificate
    assert res.exit_code == 2 and not seen
    (line,) = res.stderr.strip().splitlines()
    assert "do not load as a certificate and its key" in line and "KEY_VALUES_MISMATCH" in line


def test_an_unreadable_config_file_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    conf = tmp_path / "vnfm.toml"
    conf.write_bytes(b"port = \xff\xfe\n")
    res, seen = _start(monkeypatch, ["--config", str(conf)], {})
    assert res.exit_code == 2 and not seen
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"Error: config file {conf}: ") and "utf-8" in line


def test_a_damaged_secret_key_file_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("VNFM_SECRET_KEY", raising=False)
    (tmp_path / "secret.key").write_text("truncated-key")
    res, seen = _start(monkeypatch, ["--data-dir", str(tmp_path)], {})
    assert res.exit_code == 2 and not seen
    (line,) = res.stderr.strip().splitlines()
    assert line == (f"Error: secret key file {tmp_path / 'secret.key'} (not a Fernet key): restore it from your "
                    "backup, or give the key in VNFM_SECRET_KEY; a new key cannot decrypt the stored credentials")
    assert "truncated-key" not in res.output


def test_a_key_that_decrypts_nothing_stored_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The stored credentials were encrypted with another key: the start stops before the engine
    runs (uvicorn is never started)."""
    import uvicorn
    from cryptography.fernet import Fernet

    from vnfm.bootstrap import build
    from vnfm.config import Settings

    old = Fernet.generate_key().decode()
    core = build(Settings(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'vnfm.db'}", secret_key=old,
                          simulator=False, run_engine=False))
    core.vims.register_body({"name": "os", "vimType": "openstack", "accessInfo": {
        "authUrl": "https://keystone.example:5000/v3", "username": "admin", "password": "pw-0f-the-cloud",
        "project": "p"}})
    ran: list[Any] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: ran.append(sockets))
    for k in ("VNFM_DATABASE_URL", "VNFM_CONFIG", "VNFM_PORT", "VNFM_HOST"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("VNFM_SECRET_KEY", Fernet.generate_key().decode())
    res = CliRunner().invoke(cli, ["server", "--data-dir", str(tmp_path), "--port", "0", "--log-level", "ERROR"])
    assert res.exit_code == 2 and not ran, res.output
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("Error: setting secret_key (env VNFM_SECRET_KEY): a stored secret cannot be decrypted")
