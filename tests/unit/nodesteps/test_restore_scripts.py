"""The single-master restore's SSH path: the handlers with a recording transport (which script, which
inputs; the PKI travels as an SFTP-uploaded archive, never in a command line or variable), and the
scripts run with bash against real programs here: openssl-generated CAs for the PKI read and put,
the machine's etcd 3.4 for the restore into a one-member data directory (then served by a real etcd
started on it; a corrupt snapshot refused), a recording systemctl for the kubelet's repointing."""

from __future__ import annotations

import base64
import io
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from tests.unit.kubernetes.test_upgrade_ssh import Recording
from tests.unit.nodesteps.test_etcd_snapshot_scripts import _port, run
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.nodes.ssh.base import parse_output, script_text
from vnfm.adapters.nodes.ssh.restore import FILES, _archive
from vnfm.adapters.remote.ssh import SshTarget, script_payload
from vnfm.nodesteps.kubeadm import KubeadmInit
from vnfm.nodesteps.restore import PKI_DIR, PKI_FILES, EtcdRestoreMember, KubeletServer, PkiFetch, PkiPut
from vnfm.nodesteps.upgrade import SNAPSHOT_DIR

SHA = "b" * 64


def _pki_files() -> tuple[tuple[str, str], ...]:
    return tuple((f, base64.b64encode(f"content of {f}".encode()).decode()) for f in PKI_FILES)


async def test_handlers_run_their_scripts_pki_over_sftp() -> None:
    files = _pki_files()
    out = "@@ changed=false\n" + "".join(f"@@ file:{f}={c}\n" for f, c in files)
    ssh = Recording(out)
    ex = SshStepExecutor(ssh, {"h": SshTarget("h", username="u", password="p")})
    got = await ex.run("h", PkiFetch())
    assert got.data["files"] == dict(files) and ssh.calls[-1]["name"] == "pki_fetch"
    assert ssh.calls[-1]["stdin_vars"] == {"PKI_DIR": PKI_DIR, "FILES": FILES}
    ssh.stdout = "@@ changed=true\n"
    assert (await ex.run("h", PkiPut(files))).changed
    raw, remote = ssh.uploads[-1]
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        assert sorted(tar.getnames()) == sorted(PKI_FILES)
        key = tar.extractfile("ca.key")
        assert key is not None and key.read() == b"content of ca.key"
    assert ssh.calls[-1]["stdin_vars"]["UPLOADED"] == remote and ssh.calls[-1]["name"] == "pki_put"
    for _, c in files:
        assert c not in str(ssh.calls) and "content of" not in str(ssh.calls)
    assert "content of" not in repr(PkiPut(files))
    await ex.run("h", EtcdRestoreMember(f"{SNAPSHOT_DIR}/restore/b.db", SHA, "m-0", "https://10.0.0.5:2380", "1.31.2"))
    assert ssh.calls[-1]["name"] == "etcd_restore_member" and ssh.calls[-1]["stdin_vars"] == {
        "SNAPSHOT": f"{SNAPSHOT_DIR}/restore/b.db", "SHA256": SHA, "NAME": "m-0",
        "PEER_URL": "https://10.0.0.5:2380", "K8S_VERSION": "1.31.2", "DATA_DIR": "/var/lib/etcd"}
    with pytest.raises(ValueError, match="not like"):
        EtcdRestoreMember(f"{SNAPSHOT_DIR}/restore/b.db", SHA, "m-0", "https://10.0.0.5:2380", "1.31; reboot")
    await ex.run("h", KubeletServer("10.0.0.5:6443"))
    assert ssh.calls[-1]["stdin_vars"] == {"ENDPOINT": "10.0.0.5:6443"}
    await ex.run("h", KubeadmInit("m-0", "10.0.0.5", "10.0.0.5:6443", "10.244.0.0/16", "10.96.0.0/12", "1.31.2",
                                  existing_etcd=True))
    assert ssh.calls[-1]["name"] == "kubeadm_init" and ssh.calls[-1]["stdin_vars"]["EXISTING_ETCD"] == "1"
    with pytest.raises(ValueError, match="exactly"):
        PkiPut(files[:-1])


def _openssl_ca(d: Path, name: str) -> None:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "1", "-subj", f"/CN={name.replace('/', '-')}",
                    "-keyout", str(d / f"{name}.key"), "-out", str(d / f"{name}.crt")], check=True, capture_output=True)


def _kubeadm_pki(d: Path) -> Path:
    (d / "etcd").mkdir(parents=True)
    for name in ("ca", "front-proxy-ca", "etcd/ca"):
        _openssl_ca(d, name)
    subprocess.run(["openssl", "genrsa", "-out", str(d / "sa.key"), "2048"], check=True, capture_output=True)
    subprocess.run(["openssl", "rsa", "-in", str(d / "sa.key"), "-pubout", "-out", str(d / "sa.pub")], check=True,
                   capture_output=True)
    return d


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_pki_fetch_and_put_with_openssl_cas(tmp_path: Path) -> None:
    src = _kubeadm_pki(tmp_path / "old-master")
    rc, out, err = run("pki_fetch", {"PKI_DIR": str(src), "FILES": FILES})
    assert rc == 0, err
    files = tuple((k.split(":", 1)[1], v) for k, v in out.items() if k.startswith("file:"))
    assert sorted(f for f, _ in files) == sorted(PKI_FILES)
    archive = tmp_path / "upload.tar"
    dst = tmp_path / "new-master"

    def put() -> tuple[int, dict[str, str], str]:
        archive.write_bytes(_archive(PkiPut(files)))
        return run("pki_put", {"UPLOADED": str(archive), "PKI_DIR": str(dst), "FILES": FILES})

    rc, out, err = put()
    assert rc == 0 and out["changed"] == "true", err
    assert not archive.exists()  # the upload is removed
    for f in PKI_FILES:
        assert (dst / f).read_bytes() == (src / f).read_bytes()
        assert (dst / f).stat().st_mode & 0o777 == (0o600 if f.endswith(".key") else 0o644)
    verify = subprocess.run(["openssl", "verify", "-CAfile", str(dst / "ca.crt"), str(src / "ca.crt")],
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    rc, out, err = put()
    assert rc == 0 and out["changed"] == "false", err
    other = _kubeadm_pki(tmp_path / "other-cluster")
    (dst / "ca.crt").write_bytes((other / "ca.crt").read_bytes())
    rc, out, err = put()
    assert rc != 0 and "another certificate authority" in err
    rc, _, err = run("pki_fetch", {"PKI_DIR": str(tmp_path / "nothing"), "FILES": FILES})
    assert rc != 0 and "does not exist" in err


def _snapshot_of_a_real_etcd(tmp_path: Path, key: str) -> Path:
    """A snapshot (tmp_path/snap.db) of a one-member etcd that held `key` = 1 (the etcd stopped)."""
    env = {"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"}
    client, peer = _port(), _port()
    url = f"http://127.0.0.1:{client}"
    src = subprocess.Popen(["etcd", "--name", "old", "--data-dir", str(tmp_path / "old"), "--listen-client-urls", url,
                            "--advertise-client-urls", url, "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                            "--initial-cluster", f"old=http://127.0.0.1:{peer}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    snap = tmp_path / "snap.db"
    try:
        _until(lambda: subprocess.run(["etcdctl", "--endpoints", url, "put", key, "1"],
                                      capture_output=True, env=env).returncode == 0)
        subprocess.run(["etcdctl", "--endpoints", url, "snapshot", "save", str(snap)], check=True,
                       capture_output=True, env=env)
    finally:
        src.terminate()
        src.wait(10)
    return snap


@pytest.mark.skipif(shutil.which("etcd") is None or shutil.which("etcdctl") is None, reason="etcd is not installed")
def test_etcd_restore_member_real_etcd(tmp_path: Path) -> None:
    env = {"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"}
    snap = _snapshot_of_a_real_etcd(tmp_path, "/registry/configmaps/default/a")
    sha = subprocess.run(["sha256sum", str(snap)], capture_output=True, text=True).stdout.split()[0]
    peer2 = _port()
    data = tmp_path / "var-lib-etcd"
    inputs = {"SNAPSHOT": str(snap), "SHA256": sha, "NAME": "masternode-0", "PEER_URL": f"http://127.0.0.1:{peer2}",
              "K8S_VERSION": "1.31.2", "DATA_DIR": str(data), "MANIFEST": str(tmp_path / "etcd.yaml")}
    rc, out, err = run("etcd_restore_member", inputs)
    assert rc == 0 and out["changed"] == "true", err
    rc, out, err = run("etcd_restore_member", inputs)
    assert rc == 0 and out["changed"] == "false", err
    client2 = _port()
    url2 = f"http://127.0.0.1:{client2}"
    new = subprocess.Popen(["etcd", "--name", "masternode-0", "--data-dir", str(data), "--listen-client-urls", url2,
                            "--advertise-client-urls", url2, "--listen-peer-urls", f"http://127.0.0.1:{peer2}",
                            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer2}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        got = _until(lambda: subprocess.run(["etcdctl", "--endpoints", url2, "get", "/registry/configmaps/default/a",
                                             "--print-value-only"], capture_output=True, text=True, env=env).stdout)
        assert got.strip() == "1"
        members = subprocess.run(["etcdctl", "--endpoints", url2, "member", "list"], capture_output=True, text=True,
                                 env=env).stdout
        assert "masternode-0" in members and "old" not in members and len(members.strip().splitlines()) == 1
    finally:
        new.terminate()
        new.wait(10)
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(snap.read_bytes()[:-64] + b"\0" * 64)
    bad_sha = subprocess.run(["sha256sum", str(corrupt)], capture_output=True, text=True).stdout.split()[0]
    rc, _, err = run("etcd_restore_member", {**inputs, "SNAPSHOT": str(corrupt), "SHA256": bad_sha,
                                             "DATA_DIR": str(tmp_path / "other")})
    assert rc != 0 and not (tmp_path / "other" / "member").exists(), err
    (tmp_path / "etcd.yaml").write_text("kind: Pod\n")  # an etcd static pod runs here already: refused
    rc, _, err = run("etcd_restore_member", {**inputs, "DATA_DIR": str(tmp_path / "third")})
    assert rc != 0 and "already runs" in err


def test_kubelet_server_rewritten_and_restarted(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "systemctl").write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\n")
    (bin_dir / "systemctl").chmod(0o755)
    conf = tmp_path / "kubelet.conf"
    conf.write_text("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: X\n"
                    "    server: https://10.0.0.4:6443\n  name: default-cluster\n")
    conf.chmod(0o600)
    script = "PATH=" + str(bin_dir) + ":$PATH\n"
    inputs = {"ENDPOINT": "10.0.0.9:6443", "KUBELET_CONF": str(conf)}

    def go() -> tuple[int, dict[str, str], str]:
        r = subprocess.run(["bash", "-s"], input=script + script_payload(script_text("kubelet_server"), None, inputs),
                           capture_output=True, text=True, timeout=30)
        return r.returncode, parse_output(r.stdout), r.stderr

    rc, out, err = go()
    assert rc == 0 and out["changed"] == "true", err
    assert "    server: https://10.0.0.9:6443\n" in conf.read_text() and "10.0.0.4" not in conf.read_text()
    assert conf.stat().st_mode & 0o777 == 0o600 and calls.read_text() == "restart kubelet\n"
    rc, out, err = go()
    assert rc == 0 and out["changed"] == "false" and calls.read_text() == "restart kubelet\n", err
    inputs["KUBELET_CONF"] = str(tmp_path / "absent.conf")
    rc, _, err = go()
    assert rc != 0 and "no kubelet kubeconfig" in err


def _until(fn: object, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        got = fn()  # type: ignore[operator]
        if got:
            return str(got)
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.1)


# Stand-ins for a stock kubeadm host's kubeadm, crictl and ctr: kubeadm lists images only for a
# version it is given, crictl pulls only a fully qualified reference the test's registry holds (into
# the CRI's namespace, k8s.io), ctr mounts only an image pulled into the namespace it is asked for,
# onto an existing empty directory. They cannot check what needs root (a real mount) or a registry.
_KUBEADM = r"""#!/bin/bash
set -eu
[ "$1 $2 $3 $4" = "config images list --kubernetes-version" ] || { echo "kubeadm stand-in: unexpected $*" >&2; exit 2; }
case "$5" in
  v1.31.*) etcd=3.5.15-0 ;;
  v1.30.*) etcd=3.5.12-0 ;;
  *) echo "invalid version \"$5\"" >&2; exit 1 ;;
esac
printf 'registry.k8s.io/kube-apiserver:%s\nregistry.k8s.io/coredns/coredns:v1.11.3\n' "$5"
printf 'registry.k8s.io/pause:3.10\nregistry.k8s.io/etcd:%s\n' "$etcd"
"""
_CRICTL = r"""#!/bin/bash
set -eu
[ "$1" = --runtime-endpoint ] && [ "${2#unix://}" != "$2" ] && [ "$3" = pull ] ||
  { echo "crictl stand-in: unexpected $*" >&2; exit 2; }
echo "crictl pull $4" >> "$STANDIN/calls"
key=$(printf '%s' "$4" | tr '/:' '__')
[ -d "$STANDIN/registry/$key" ] || { echo "pulling image: rpc error: $4: not found" >&2; exit 1; }
mkdir -p "$STANDIN/k8s.io"; ln -sfn "$STANDIN/registry/$key" "$STANDIN/k8s.io/$key"
"""
_CTR = r"""#!/bin/bash
set -eu
[ "$1" = -n ] && [ "$3" = images ] || { echo "ctr stand-in: unexpected $*" >&2; exit 2; }
ns=$2; shift 3
echo "ctr -n $ns $*" >> "$STANDIN/calls"
case "$1" in
  mount)
    key=$(printf '%s' "$2" | tr '/:' '__')
    [ -e "$STANDIN/$ns/$key" ] || { echo "ctr: image \"$2\": not found" >&2; exit 1; }
    [ -d "$3" ] && [ -z "$(ls -A "$3")" ] || { echo "ctr: mount target $3 is not an empty directory" >&2; exit 1; }
    cp -a "$STANDIN/$ns/$key/." "$3/"; echo "sha256:chain"; echo "$3" ;;
  unmount)
    [ "$2" = --rm ] || { echo "ctr stand-in: unexpected $*" >&2; exit 2; }
    find "$3" -mindepth 1 -delete; echo "$3" ;;
  *) echo "ctr stand-in: unexpected $*" >&2; exit 2 ;;
esac
"""


@pytest.mark.skipif(shutil.which("etcd") is None or shutil.which("etcdctl") is None, reason="etcd is not installed")
def test_etcd_restore_member_takes_etcdutl_from_kubeadms_etcd_image(tmp_path: Path) -> None:
    """No etcdutl or etcdctl on PATH (a stock kubeadm host): the one in the etcd image kubeadm lists for
    the cluster's version restores the snapshot; the image is pulled through the CRI, mounted in its
    namespace and unmounted (snapshot removed) afterwards, also when it fails."""
    snap = _snapshot_of_a_real_etcd(tmp_path, "/registry/a")
    standin = tmp_path / "standin"
    bin_dir = standin / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("cat", "cut", "sha256sum", "rm", "mv", "install", "mktemp", "grep", "rmdir", "mkdir", "ln", "tr",
                 "cp", "find", "ls"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    for name, text in (("kubeadm", _KUBEADM), ("crictl", _CRICTL), ("ctr", _CTR)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    image = standin / "registry" / "registry.k8s.io_etcd_3.5.15-0" / "usr" / "local" / "bin"
    image.mkdir(parents=True)
    (image / "etcdutl").write_text(f"#!/bin/bash\nexec {shutil.which('etcdctl')} \"$@\"\n")  # 3.4's restore
    (image / "etcdutl").chmod(0o755)
    sha = subprocess.run(["sha256sum", str(snap)], capture_output=True, text=True).stdout.split()[0]
    inputs = {"SNAPSHOT": str(snap), "SHA256": sha, "NAME": "m-0", "PEER_URL": "http://127.0.0.1:2380",
              "K8S_VERSION": "1.31.2", "DATA_DIR": str(tmp_path / "data"), "MANIFEST": str(tmp_path / "etcd.yaml")}

    def go(**over: str) -> tuple[int, dict[str, str], str]:
        prefix = f"export PATH={bin_dir} STANDIN={standin}\n"
        r = subprocess.run([shutil.which("bash") or "/bin/bash", "-s"], capture_output=True, text=True, timeout=60,
                           input=prefix + script_payload(script_text("etcd_restore_member"), None, {**inputs, **over}))
        return r.returncode, parse_output(r.stdout), r.stderr

    rc, out, err = go()
    assert rc == 0 and out["changed"] == "true", err
    assert (tmp_path / "data" / "member" / "snap" / "db").is_file()
    calls = (standin / "calls").read_text().splitlines()
    assert calls[0] == "crictl pull registry.k8s.io/etcd:3.5.15-0"
    assert calls[1].startswith("ctr -n k8s.io mount registry.k8s.io/etcd:3.5.15-0 /tmp/vnfm-etcd-image.")
    mnt = calls[1].split()[-1]
    assert calls[2] == f"ctr -n k8s.io unmount --rm {mnt}" and not Path(mnt).exists()
    rc, out, err = go()  # restored from that digest: nothing pulled again
    assert rc == 0 and out["changed"] == "false" and len((standin / "calls").read_text().splitlines()) == 3, err
    rc, _, err = go(K8S_VERSION="1.29.0", DATA_DIR=str(tmp_path / "d2"))
    assert rc != 0 and "no etcd image for Kubernetes 1.29.0" in err
    (image / "etcdutl").unlink()  # an image without etcdutl: refused, and still unmounted
    rc, _, err = go(DATA_DIR=str(tmp_path / "d3"))
    assert rc != 0 and "has no /usr/local/bin/etcdutl" in err and not (tmp_path / "d3" / "member").exists()
    assert (standin / "calls").read_text().splitlines()[-1].startswith("ctr -n k8s.io unmount --rm ")
    (bin_dir / "ctr").unlink()
    rc, _, err = go(DATA_DIR=str(tmp_path / "d4"))
    assert rc != 0 and "no ctr to take it from the etcd image" in err
