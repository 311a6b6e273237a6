"""The files for running vnfm as a service: the systemd unit passes `systemd-analyze verify` and
`systemd-analyze security` rates it <= 3.0; the Containerfile is checked by parsing it (what can be
checked without a registry: its two stages, copied paths, pinned install, no test tools in the
image, entry point, health check, user; tests/integration/test_container_image.py builds and runs
it with podman); the sample TOML settings load."""

from __future__ import annotations

import contextlib
import json
import os
import re
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


HARDENING_THRESHOLD = 3.0


def _exposure(unit_text: str, tmp_path: Path) -> float:
    unit = tmp_path / "vnfm-check.service"
    unit.write_text(unit_text)
    res = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", str(unit)],
                         capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for vnfm-check\.service: (\d+\.\d+)", res.stdout)
    assert m is not None, res.stdout[-500:] + res.stderr[-500:]
    return float(m.group(1))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_unit_is_hardened(tmp_path: Path) -> None:
    """`systemd-analyze security` (offline: the unit file alone) rates the unit's exposure at most
    3.0 of 10; the unit without its sandboxing directives rates far worse (the check can fail)."""
    text = UNIT.read_text()
    assert _exposure(text, tmp_path) <= HARDENING_THRESHOLD
    bare = "\n".join(line for line in text.splitlines()
                     if not re.match(r"(Protect|Private|Restrict|Capability|SystemCall|UMask)", line))
    assert _exposure(bare, tmp_path) > 5.0


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


def _stages() -> list[list[tuple[str, str]]]:
    """The Containerfile's stages (each from its FROM), after the global ARGs."""
    stages: list[list[tuple[str, str]]] = []
    for word, rest in _instructions():
        if word == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((word, rest))
    return stages


TEST_TOOLS = ("pytest", "ruff", "mypy", "tackerclient", "openstackclient", "ansible", "kubectl")


def test_containerfile_parses_and_fits_the_project() -> None:
    ins = _instructions()
    assert {w for w, _ in ins} <= INSTRUCTIONS, {w for w, _ in ins} - INSTRUCTIONS
    args = dict(rest.split("=", 1) for w, rest in ins[: next(i for i, (w, _) in enumerate(ins) if w == "FROM")])
    assert "python:3.11" in args["PYTHON_IMAGE"]
    build, final = _stages()  # multi-stage: the image is the last stage only
    assert build[0] == ("FROM", "${PYTHON_IMAGE} AS build") and final[0] == ("FROM", "${PYTHON_IMAGE}")
    for word, rest in ins:
        if word == "COPY" and not rest.startswith("--from"):
            *sources, _dest = rest.split()
            for src in sources:
                assert (ROOT / src).exists(), f"COPY {src}: not in the repository"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    run = " ".join(rest for w, rest in build if w == "RUN")
    assert '".[postgres]"' in run and "postgres" in project["optional-dependencies"]
    assert "--constraint constraints.txt" in run  # the pinned versions
    # the image: the venv built in the first stage; no sources, no test tools, no pip install
    image = "\n".join(f"{w} {rest}" for w, rest in final)
    assert "COPY --from=build /opt/vnfm/venv /opt/vnfm/venv" in image
    assert "pip install" not in image and "COPY src" not in image and "[test" not in image
    assert not [t for t in TEST_TOOLS if t in run]
    entry = json.loads(dict(final)["ENTRYPOINT"])
    assert entry == ["vnfm", "server"] and "vnfm" in project["scripts"]
    users = [rest for w, rest in final if w == "USER"]
    assert users and users[-1] not in ("root", "0")
    env = " ".join(rest for w, rest in final if w == "ENV")
    port = dict(final)["EXPOSE"]
    assert f"VNFM_PORT={port}" in env and "VNFM_HOST=0.0.0.0" in env and "/opt/vnfm/venv/bin" in env
    assert "INSECURE" not in env and "VNFM_AUTH_TOKEN" not in env  # the image needs real authentication
    health = dict(final)["HEALTHCHECK"]
    assert json.loads(health.split("CMD", 1)[1]) == ["vnfm", "healthcheck"]  # tests/unit/cli/test_healthcheck.py


def test_the_healthcheck_command_is_a_command_of_vnfm() -> None:
    from click.testing import CliRunner

    from vnfm.entrypoints.cli.main import cli

    res = CliRunner().invoke(cli, ["healthcheck", "--help"])
    assert res.exit_code == 0 and "/healthz" in res.output


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


def test_constraints_pin_every_dependency() -> None:
    """constraints.txt (scripts/lock.sh) pins every requirement of pyproject.toml, and this venv
    (scripts/setup.sh installs with it) has exactly those versions: a dependency added without
    running scripts/lock.sh fails here."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    text = (ROOT / "constraints.txt").read_text()
    pins = dict(line.split("==", 1) for line in text.splitlines() if line and not line.startswith("#"))
    pins = {canonicalize_name(k): v.strip() for k, v in pins.items()}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    names = {canonicalize_name(Requirement(r).name) for r in wanted}
    assert sorted(names - set(pins)) == [], "run scripts/lock.sh"
    for name in names:
        req = next(Requirement(r) for r in wanted if canonicalize_name(Requirement(r).name) == name)
        assert req.specifier.contains(pins[name], prereleases=True), (name, pins[name], str(req.specifier))
        with contextlib.suppress(PackageNotFoundError):
            assert version(name) == pins[name], f"{name}: installed {version(name)}, pinned {pins[name]}"
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert "--constraint constraints.txt" in setup
