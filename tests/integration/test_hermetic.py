"""Test hosts are hermetic: the suite behaves the same from any clone path (under /tmp too) and on a
machine with daemon state left behind (podman storage of another graph driver, etcd data).

1. In this session: state the machine holds under a host's state directories is not seen there.
2. A git clone of this repository under /tmp, with podman state left on the machine first, runs a
   small part of the integration suite (podman as the registry VNF's docker, the real
   ansible-playbook linked from the clone's virtualenv into a host) on its own test bed.
The state the test leaves on the machine is created only where nothing was, and removed again;
it exists only while this session holds the test-host lock, so no other session sees it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import require
from tests.integration.harness import BOUND_STATE_DIRS, REPO, STATE_DIRS, Testbed
from vnfm.adapters.remote.ssh import SshExecutor

pytestmark = pytest.mark.integration

# What the clone runs: the podman-backed registry VNF and one Kubespray test whose hosts run the
# clone's ansible-playbook (both failed from a /tmp clone / with podman state before).
INNER_TESTS = (
    "tests/integration/test_private_registry.py",
    "tests/integration/test_kubespray_standin_playbooks.py::test_kubespray_standin_cluster_scale_remove_and_terminate",
    "tests/integration/test_hermetic.py::test_host_state_directories_are_private",
)
INNER_DEADLINE = 300


def _leave(path: Path) -> Path | None:
    """Create `path` as leftover state when the machine has nothing there; the topmost directory
    created (to remove again), or None when something was there already."""
    top = path
    while not top.parent.exists():
        top = top.parent
    if top.exists():
        return None
    path.mkdir(parents=True)
    return top


@pytest.fixture
def requirements() -> None:
    require("git", "podman", "runc", "skopeo", "docker-registry", "curl")


@pytest.fixture
def leftover_state(testbed: Testbed) -> Iterator[None]:
    """Podman storage (overlay, in the machine's default place) and etcd data on the machine, made
    while this session holds the test-host lock, removed afterwards (only what this made)."""
    made: list[Path] = []
    try:
        podman_state = [Path("/var/lib/containers/storage"), Path("/run/containers")]
        if not any(p.exists() for p in podman_state):
            made += podman_state
            subprocess.run(["podman", "--cgroup-manager=cgroupfs", "info"], capture_output=True, timeout=60,
                           check=True)
        top = _leave(Path("/var/lib/etcd/member/wal"))
        if top is not None:
            made.append(top)
            Path("/var/lib/etcd/member/wal/leftover.wal").write_text("not a wal\n")
        yield
    finally:
        for p in made:
            shutil.rmtree(p, ignore_errors=True)


async def test_host_state_directories_are_private(make_hosts, ssh: SshExecutor) -> None:
    marker = Path("/var/lib/etcd/vnfm-hermetic-marker")
    top = _leave(marker.parent)
    try:
        if marker.parent.exists():
            marker.write_text("machine state\n")
        (h,) = make_hosts(1)
        res = await ssh.run(h.target(), "for d in " + " ".join((*STATE_DIRS, *BOUND_STATE_DIRS)) + "; do "
                            "[ -d \"$d\" ] && [ -z \"$(ls -A \"$d\")\" ] || echo \"$d\"; done", check=True)
        assert res.stdout == "", f"state directories not empty in a fresh host: {res.stdout}"
        # a host may remove them like any directory (a test "wipes the disk" that way)
        await ssh.run(h.target(), "rm -rf /var/lib/etcd /var/lib/containers && mkdir /var/lib/etcd", check=True)
        # written in the host, stays in the host (and survives its restart, not its replacement)
        await ssh.run(h.target(), "echo host > /var/lib/etcd/x", check=True)
        assert not Path("/var/lib/etcd/x").exists()
        h.restart()
        assert (await ssh.run(h.target(), "cat /var/lib/etcd/x", check=True)).stdout == "host\n"
        h.replace()
        assert not (await ssh.run(h.target(), "test -e /var/lib/etcd/x")).ok
    finally:
        marker.unlink(missing_ok=True)
        if top is not None:
            shutil.rmtree(top, ignore_errors=True)


def _clone_venv(clone: Path) -> Path:
    """A virtualenv inside the clone that uses the clone's sources and this venv's installed
    libraries (no network, ~1 s): a .pth for both, and the ansible entry points re-pointed at it."""
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    ours = sysconfig.get_paths()["purelib"]
    (site / "vnfm-clone.pth").write_text(f"{clone / 'src'}\n{ours}\n")
    for tool in ("ansible-playbook",):
        src = Path(sys.executable).parent / tool
        text = src.read_text().split("\n", 1)[1]
        (venv / "bin" / tool).write_text(f"#!{venv / 'bin' / 'python'}\n{text}")
        (venv / "bin" / tool).chmod(0o755)
    return venv


def test_suite_runs_from_a_tmp_clone_with_leftover_machine_state(requirements: None, testbed: Testbed,
                                                                   leftover_state: None) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-clone-", dir="/tmp") as tmp:
        clone = Path(tmp) / "vnfm"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True, timeout=120)
        rev = os.environ.get("VNFM_ITEST_CLONE_REV")  # e.g. `git stash create` of a mutation to try
        if rev:
            subprocess.run(["git", "-C", str(clone), "checkout", "-q", rev], check=True, timeout=60)
        venv = _clone_venv(clone)
        # its own test bed: another lock, namespace prefix, bridge and subnet than this session's
        env = dict(os.environ, VNFM_ITEST_DIR="/run/vnfm-itest-clone", VNFM_ITEST_PREFIX="vnfmc",
                   VNFM_ITEST_NET="10.232.9", PYTHONDONTWRITEBYTECODE="1")
        res = subprocess.run([str(venv / "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              *INNER_TESTS],
                             cwd=clone, env=env, capture_output=True, text=True, timeout=INNER_DEADLINE)
        tail = (res.stdout + res.stderr)[-3000:]
        assert res.returncode == 0, tail
        assert "3 passed" in res.stdout and "skipped" not in res.stdout, tail
        assert Path("/var/lib/containers/storage").is_dir()  # the leftover state was there throughout
