"""The Containerfile built and run for real with podman (rootful), in the docker and OCI formats.

docker.io does not resolve on every build machine (it does not on the CI one), so the base image
is made here: `mmdebstrap` of a minimal Debian bookworm with python3, python3-venv and passwd
(`useradd`), imported with `podman import` and passed as `--build-arg PYTHON_IMAGE=...`; with
VNFM_TEST_PYTHON_IMAGE=docker.io/library/python:3.11-slim (a registry reachable) that base is used
instead. The base also carries this machine's CA bundle and an /etc/pip.conf naming it, so pip
inside the build reaches PyPI through a TLS-intercepting proxy as the host's pip does. It is cached
per machine and day in /var/cache/vnfm-image-base (~35-60 s once a day). The images are built
without a layer cache (no build-stage images pile up): ~50 s per format, the module ~2 min warm,
~2.5 min cold.

Each format's image then runs (`podman run -d`, VNFM_OAUTH2_CLIENTS set: it listens on 0.0.0.0),
`vnfm healthcheck` passes inside it, GET /healthz answers from the host, and the image holds vnfm
but no pytest, ruff or mypy. Runs where root, podman and mmdebstrap exist (.ci/integration-deps.sh
installs mmdebstrap); skips with the reason otherwise."""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import os
import resource
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "Containerfile"
CACHE = Path("/var/cache/vnfm-image-base")
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
MIRROR = "http://deb.debian.org/debian"
PACKAGES = "python3,python3-venv,passwd"


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "not root (the image is built and run with rootful podman)"
    missing = [p for p in ("podman", "mmdebstrap") if shutil.which(p) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (run .ci/integration-deps.sh)"
    return None


pytestmark = pytest.mark.skipif(_unavailable() is not None, reason=_unavailable() or "")


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


def _ok(*args: str, timeout: float = 600) -> str:
    res = _run(*args, timeout=timeout)
    assert res.returncode == 0, f"{' '.join(args[:4])} ...: exit {res.returncode}\n{res.stderr[-3000:]}"
    return res.stdout


def _base_tarball() -> Path:
    """Debian bookworm + python3/venv/passwd + this machine's CA bundle, cached per day (and per
    CA bundle: a changed proxy certificate makes a new base)."""
    ca = CA_BUNDLE.read_bytes() if CA_BUNDLE.exists() else b""
    key = f"{datetime.date.today():%Y%m%d}-{hashlib.sha256(ca + PACKAGES.encode()).hexdigest()[:12]}"
    tar = CACHE / f"bookworm-{key}.tar"
    if tar.exists():
        return tar
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob("bookworm-*.tar"):
        old.unlink()
    hook = ""
    if ca:
        hook = (f'mkdir -p "$1/etc/ssl/certs" && cp {CA_BUNDLE} "$1/etc/ssl/certs/ca-certificates.crt"'
                f' && printf "[global]\\ncert = {CA_BUNDLE}\\n" > "$1/etc/pip.conf"')
    partial = tar.with_suffix(".partial")
    _ok("mmdebstrap", "--quiet", "--variant=minbase", f"--include={PACKAGES}", "--format=tar",
        *([f"--customize-hook={hook}"] if hook else []), "bookworm", str(partial), MIRROR, timeout=900)
    partial.rename(tar)
    return tar


@pytest.fixture(scope="module")
def image_lock() -> Iterator[None]:
    """One session at a time builds the base and the localhost/vnfm:it-* tags on this machine (its
    own lock file: the test bed's lock is held by this same session while its hosts run)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    fd = os.open(CACHE / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + 1800
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"another test session holds {CACHE / '.lock'}") from None
                time.sleep(0.5)
        yield
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def python_image(image_lock: None) -> str:
    given = os.environ.get("VNFM_TEST_PYTHON_IMAGE")
    if given:
        return given
    tar = _base_tarball()
    ref = f"localhost/vnfm-image-base:{tar.stem.removeprefix('bookworm-')}"
    if _run("podman", "image", "exists", ref).returncode != 0:
        stale = _run("podman", "images", "--format", "{{.Repository}}:{{.Tag}}", "localhost/vnfm-image-base")
        for old in stale.stdout.split():  # earlier days' bases
            _run("podman", "rmi", old)
        _ok("podman", "import", str(tar), ref)
    return ref


def _limits() -> list[str]:
    """podman's default nofile/nproc limits exceed this machine's hard limits (runc then fails with
    "error setting rlimit type 7"): the container gets lower ones (lowering is always allowed);
    and no systemd here, so
    no health-check timer (`podman healthcheck run` runs the image's HEALTHCHECK on demand)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    nofile = min(v for v in (soft, hard, 65536) if v != resource.RLIM_INFINITY)
    return ["--health-interval", "disable", "--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", "nproc=4096:4096"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthz(url: str, container: str, deadline_s: float = 60) -> tuple[int, str]:
    deadline = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (http on loopback)
                return resp.status, resp.read().decode()
        except OSError as exc:
            last = str(exc)
        time.sleep(0.3)
    logs = _run("podman", "logs", container).stderr[-2000:]
    raise AssertionError(f"{url} did not answer within {deadline_s} s ({last}); container log:\n{logs}")


@pytest.fixture
def container_names() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        _run("podman", "rm", "-f", "-t", "2", name)


@pytest.mark.parametrize("fmt", ["docker", "oci"])
def test_image_builds_and_serves(fmt: str, python_image: str, container_names: list[str]) -> None:
    tag = f"localhost/vnfm:it-{fmt}"
    before = _run("podman", "image", "inspect", "--format", "{{.Id}}", tag).stdout.strip()
    # --layers=false: no cached build-stage images left behind (~0.5 GB per source change)
    _ok("podman", "build", "--layers=false", "--format", fmt, "--build-arg", f"PYTHON_IMAGE={python_image}",
        "-f", str(CONTAINERFILE), "-t", tag, str(ROOT), timeout=1200)
    if before and before != _run("podman", "image", "inspect", "--format", "{{.Id}}", tag).stdout.strip():
        _run("podman", "rmi", before)  # the previous run's image, untagged by this build
    config = json.loads(_ok("podman", "inspect", "--type", "image", tag))[0]
    health = config.get("Healthcheck") or (config.get("Config") or {}).get("Healthcheck")
    if fmt == "docker":  # kept; the OCI format has no field for it
        assert health and health.get("Test") == ["CMD", "vnfm", "healthcheck"], health
    else:
        assert not health, health
    assert config["Config"]["User"] == "vnfm"
    assert config["Config"]["Entrypoint"] == ["vnfm", "server"]

    probe = "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in ('pytest', 'ruff', 'mypy')))"
    _ok("podman", "run", "--rm", *_limits(), "--entrypoint", "python3", tag, "-c", probe, timeout=120)
    assert "vnfm" in _ok("podman", "run", "--rm", *_limits(), "--entrypoint", "vnfm", tag, "--version", timeout=120)

    from vnfm.domain.secret_hash import hash_secret

    clients = [{"client_id": "nfvo", "secret_hash": hash_secret("image-test-secret"), "roles": ["operator"],
                "tenant": "t1"}]
    port = _free_port()
    name = f"vnfm-it-image-{fmt}-{os.getpid()}"
    container_names.append(name)
    env = os.environ | {"VNFM_OAUTH2_CLIENTS": json.dumps(clients)}  # from podman's environment, not its argv
    res = subprocess.run(["podman", "run", "-d", *_limits(), "--name", name, "-p", f"127.0.0.1:{port}:9890",
                          "-e", "VNFM_OAUTH2_CLIENTS", tag], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    status, body = _wait_healthz(f"http://127.0.0.1:{port}/healthz", name)
    assert status == 200, body
    res = _run("podman", "exec", name, "vnfm", "healthcheck", timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    if fmt == "docker":  # podman runs the image's own HEALTHCHECK
        res = _run("podman", "healthcheck", "run", name, timeout=60)
        assert res.returncode == 0, res.stdout + res.stderr
    assert _ok("podman", "exec", name, "id", "-un").strip() == "vnfm"
