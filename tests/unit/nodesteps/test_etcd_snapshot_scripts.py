"""The etcd snapshot scripts against a real etcd (the machine's, on loopback ports of a temp dir):
save reads the snapshot back and bounds the kept count, fetch checks digest and size."""

from __future__ import annotations

import base64
import hashlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vnfm.adapters.nodes.ssh.base import parse_output, script_text
from vnfm.adapters.remote.ssh import script_payload

pytestmark = pytest.mark.skipif(shutil.which("etcd") is None or shutil.which("etcdctl") is None,
                                reason="etcd / etcdctl are not installed (Debian package etcd-server, etcd-client)")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[str]:
    client, peer = _port(), _port()
    url = f"http://127.0.0.1:{client}"
    proc = subprocess.Popen(["etcd", "--name", "m0", "--data-dir", str(tmp_path / "data"),
                             "--listen-client-urls", url, "--advertise-client-urls", url,
                             "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                             "--initial-cluster", f"m0=http://127.0.0.1:{peer}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while subprocess.run(["etcdctl", "--endpoints", url, "endpoint", "health"], capture_output=True,
                             env={"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"}).returncode != 0:
            assert time.monotonic() < deadline, "etcd did not start"
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def run(name: str, inputs: dict[str, str]) -> tuple[int, dict[str, str], str]:
    r = subprocess.run(["bash", "-s"], input=script_payload(script_text(name), None, inputs),
                       capture_output=True, text=True, timeout=60)
    return r.returncode, parse_output(r.stdout), r.stderr


def test_save_fetch_and_bound(etcd: str, tmp_path: Path) -> None:
    env = {"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"}
    for i in range(5):
        subprocess.run(["etcdctl", "--endpoints", etcd, "put", f"/registry/pods/default/p{i}", "x"], check=True,
                       capture_output=True, env=env)
    snaps = tmp_path / "snaps"
    first = str(snaps / "etcd-a.db")
    rc, out, err = run("etcd_snapshot_save", {"ENDPOINTS": etcd, "SNAPSHOT": first, "KEEP": "2"})
    assert rc == 0, err
    assert out["changed"] == "true" and int(out["keys"]) >= 5 and int(out["revision"]) >= 6
    raw = Path(first).read_bytes()
    assert out["sha256"] == hashlib.sha256(raw).hexdigest() and int(out["size"]) == len(raw)
    assert Path(first).stat().st_mode & 0o777 == 0o600
    rc, again, err = run("etcd_snapshot_save", {"ENDPOINTS": etcd, "SNAPSHOT": first, "KEEP": "2"})
    assert rc == 0 and again["changed"] == "false" and again["sha256"] == out["sha256"], err
    for name in ("etcd-b.db", "etcd-c.db"):
        time.sleep(0.01)
        assert run("etcd_snapshot_save", {"ENDPOINTS": etcd, "SNAPSHOT": str(snaps / name), "KEEP": "2"})[0] == 0
    assert sorted(p.name for p in snaps.glob("*.db")) == ["etcd-b.db", "etcd-c.db"]  # the oldest went
    b = str(snaps / "etcd-b.db")
    digest = hashlib.sha256(Path(b).read_bytes()).hexdigest()
    rc, fetched, err = run("etcd_snapshot_fetch", {"SNAPSHOT": b, "SHA256": digest, "MAX_BYTES": "100000000"})
    assert rc == 0 and base64.b64decode(fetched["content"]) == Path(b).read_bytes(), err
    rc, _, err = run("etcd_snapshot_fetch", {"SNAPSHOT": b, "SHA256": digest, "MAX_BYTES": "10"})
    assert rc != 0 and "more than the 10 allowed" in err
    rc, _, err = run("etcd_snapshot_fetch", {"SNAPSHOT": b, "SHA256": "0" * 64, "MAX_BYTES": "100000000"})
    assert rc != 0 and "digest differs" in err


def test_restore_drill(etcd: str, tmp_path: Path) -> None:
    """The drill restores the snapshot into a scratch etcd on other ports: keys and revision are
    compared, the cluster's etcd is untouched, nothing is left behind; a wrong count fails."""
    env = {"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"}
    for i in range(4):
        subprocess.run(["etcdctl", "--endpoints", etcd, "put", f"/registry/pods/default/p{i}", "x"], check=True,
                       capture_output=True, env=env)
    subprocess.run(["etcdctl", "--endpoints", etcd, "put", "/registry/pods/default/p0", "y"], check=True,
                   capture_output=True, env=env)  # a second revision of a key: totalKey counts revisions
    snap = str(tmp_path / "snaps" / "etcd-d.db")
    rc, saved, err = run("etcd_snapshot_save", {"ENDPOINTS": etcd, "SNAPSHOT": snap, "KEEP": "2"})
    assert rc == 0, err
    port = _port()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inputs = {"SNAPSHOT": snap, "SHA256": saved["sha256"], "KEYS": saved["keys"], "REVISION": saved["revision"],
              "PORT": str(port), "TMPDIR": str(scratch)}
    rc, out, err = run("etcd_restore_drill", inputs)
    assert rc == 0, err
    assert out["keys"] == saved["keys"] and out["revision"] == saved["revision"] and out["live_keys"] == "4"
    assert list(scratch.iterdir()) == []  # the scratch data directory is gone
    with socket.socket() as s:  # and the scratch etcd stopped
        assert s.connect_ex(("127.0.0.1", port)) != 0
    rc, _, err = run("etcd_restore_drill", {**inputs, "KEYS": str(int(saved["keys"]) + 1)})
    assert rc != 0 and f"holds {saved['keys']} keys" in err and list(scratch.iterdir()) == []
    rc, _, err = run("etcd_restore_drill", {**inputs, "SHA256": "0" * 64})
    assert rc != 0 and "digest differs" in err
