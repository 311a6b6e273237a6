"""The files for running vnfm as a service: the systemd unit passes `systemd-analyze verify`, the
Containerfile is checked by parsing it (what can be checked without a registry: instructions,
copied paths, entry point, health check, user), the sample TOML settings load."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "systemd" / "vnfm.service"
CONTAINERFILE = ROOT / "Containerfile"
INSTRUCTIONS = {"FROM", "ENV", "WORKDIR", "COPY", "RUN", "USER", "VOLUME", "EXPOSE", "HEALTHCHECK", "ENTRYPOINT",
                "CMD", "ARG", "LABEL"}


def _verify(unit_text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    unit = tmp_path / "vnfm-check.service"
    unit.write_text(unit_text)
    return subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_unit_verifies(tmp_path: Path) -> None:
    text = UNIT.read_text()
    # verify wants ExecStart's program to exist: point it at an executable that does here
    exe = shutil.which("true") or "/bin/true"
    checked = text.replace("/opt/vnfm/venv/bin/vnfm", exe)
    assert checked != text
    res = _verify(checked, tmp_path)
    assert res.returncode == 0 and "vnfm-check.service" not in res.stderr, res.stderr
    # the check can fail: a broken copy does
    res = _verify(checked.replace("Type=exec", "Type=bogus").replace("[Service]", "[Service]\nExecStart=relative"),
                  tmp_path)
    assert res.returncode != 0 or "vnfm-check.service" in res.stderr
    assert "RestartPreventExitStatus=2" in text  # a bad setting (exit 2) is not restarted in a loop


def _instructions() -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    pending = ""
    for raw in CONTAINERFILE.read_text().splitlines():
        if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        pending += raw.rstrip().removesuffix("\\") + " " if raw.rstrip().endswith("\\") else raw
        if raw.rstrip().endswith("\\"):
            continue
        word, _, rest = pending.strip().partition(" ")
        lines.append((word.upper(), rest.strip()))
        pending = ""
    assert not pending, "the Containerfile ends inside a continued line"
    return lines


def test_containerfile_parses_and_fits_the_project() -> None:
    ins = _instructions()
    assert {w for w, _ in ins} <= INSTRUCTIONS, {w for w, _ in ins} - INSTRUCTIONS
    assert ins[0][0] == "FROM" and "python:3.11" in ins[0][1]
    for word, rest in ins:
        if word == "COPY":
            *sources, _dest = rest.split()
            for src in sources:
                assert (ROOT / src).exists(), f"COPY {src}: not in the repository"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    entry = json.loads(dict(ins)["ENTRYPOINT"])
    assert entry == ["vnfm", "server"] and "vnfm" in project["scripts"]
    run = " ".join(rest for w, rest in ins if w == "RUN")
    assert '".[postgres]"' in run and "postgres" in project["optional-dependencies"]
    users = [rest for w, rest in ins if w == "USER"]
    assert users and users[-1] not in ("root", "0")
    env = " ".join(rest for w, rest in ins if w == "ENV")
    port = dict(ins)["EXPOSE"]
    assert f"VNFM_PORT={port}" in env and "VNFM_HOST=0.0.0.0" in env
    assert "INSECURE" not in env and "VNFM_AUTH_TOKEN" not in env  # the image needs real authentication
    health = dict(ins)["HEALTHCHECK"]
    assert "://127.0.0.1:' + os.environ.get('VNFM_PORT', '9890') + '/healthz'" in health and port == "9890"
    assert "VNFM_TLS_CERT" in health  # https when the server serves TLS


BUILDER = shutil.which("podman") or shutil.which("docker")


@pytest.mark.skipif(os.environ.get("VNFM_TEST_IMAGE_BUILD") != "1" or BUILDER is None,
                    reason="building the image pulls python:3.11-slim and PyPI packages: set VNFM_TEST_IMAGE_BUILD=1 "
                           "where a registry is reachable")
def test_containerfile_builds() -> None:
    assert BUILDER is not None
    res = subprocess.run([BUILDER, "build", "-f", str(CONTAINERFILE), "-t", "vnfm:test", str(ROOT)],
                         capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr[-2000:]


def test_sample_settings_file_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    from vnfm.config import load_settings

    for k in list(os.environ):
        if k.startswith("VNFM_"):
            monkeypatch.delenv(k)
    s = load_settings(ROOT / "deploy" / "vnfm.toml")
    assert (s.host, s.port, s.data_dir, s.log_format) == ("0.0.0.0", 9890, Path("/var/lib/vnfm"), "json")


def test_the_shipped_settings_require_authentication(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As shipped (no client uncommented) the server does not start; with the sample client it does."""
    from vnfm.config import SettingsError, check_runtime, load_settings
    from vnfm.domain.secret_hash import hash_secret

    for k in list(os.environ):
        if k.startswith("VNFM_"):
            monkeypatch.delenv(k)
    text = (ROOT / "deploy" / "vnfm.toml").read_text().replace("/var/lib/vnfm", str(tmp_path))
    conf = tmp_path / "vnfm.toml"
    conf.write_text(text)
    with pytest.raises(SettingsError) as err:
        check_runtime(load_settings(conf))
    assert err.value.lines[0].startswith("setting host (env VNFM_HOST): listening on 0.0.0.0 needs authentication")
    sample = [line.removeprefix("# ") for line in text.splitlines()
              if line.startswith(("# [[oauth2_clients]]", "# client_id", "# secret_hash", "# roles", "# tenant"))]
    assert len(sample) == 5
    enabled = "\n".join(sample).replace("scrypt$16384$8$1$...", hash_secret("s3cret-of-the-nfvo"))
    conf.write_text(text + "\n" + enabled + "\n")
    s = load_settings(conf)
    check_runtime(s)
    assert [(c.client_id, c.roles, c.tenant) for c in s.oauth2_clients] == [("nfvo", ["operator"], "tenant-a")]


def test_containerfile_healthcheck_command_runs(tmp_path: Path) -> None:
    """The HEALTHCHECK's own command against a local /healthz (200) and a missing one (fails)."""
    import http.server
    import sys
    import threading

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200 if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, *a: object) -> None:
            pass

    cmd = json.loads(dict(_instructions())["HEALTHCHECK"].split("CMD", 1)[1])
    assert cmd[:2] == ["python", "-c"]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VNFM_")}
        ok = subprocess.run([sys.executable, "-c", cmd[2]], env={**env, "VNFM_PORT": str(srv.server_address[1])},
                            capture_output=True, timeout=30)
        assert ok.returncode == 0, ok.stderr
    finally:
        srv.shutdown()
        srv.server_close()
    down = subprocess.run([sys.executable, "-c", cmd[2]], env={**env, "VNFM_PORT": str(srv.server_address[1])},
                          capture_output=True, timeout=30)
    assert down.returncode != 0
