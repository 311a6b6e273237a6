"""Single-master restore steps over SSH (nodesteps/restore.py): the cluster's PKI read from a
control plane and put on a new one (a tar archive uploaded by SFTP with mode 0600, never on a
command line), etcd restored as the only member, a worker's kubelet pointed at the API server."""

from __future__ import annotations

import base64
import io
import os
import tarfile
import tempfile

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.restore import PKI_DIR, PKI_FILES, EtcdRestoreMember, KubeletServer, PkiFetch, PkiPut, check_pki

FILES = " ".join(PKI_FILES)


async def pki_fetch(ex: ScriptRunner, t: SshTarget, s: PkiFetch) -> StepResult:
    out = await ex.script(t, s, "pki_fetch", {"PKI_DIR": PKI_DIR, "FILES": FILES})
    files = {k.split(":", 1)[1]: v for k, v in out.items() if k.startswith("file:")}
    try:
        check_pki(tuple(files.items()))
    except ValueError as e:
        raise StepFailed(t.host, s, f"the PKI read back is not complete: {e}") from None
    return StepResult(False, {"files": files})


def _archive(s: PkiPut) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, content in s.files:
            raw = base64.b64decode(content)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(raw), 0o600
            tar.addfile(info, io.BytesIO(raw))
    return buf.getvalue()


async def pki_put(ex: ScriptRunner, t: SshTarget, s: PkiPut) -> StepResult:
    fd, local = tempfile.mkstemp(prefix="vnfm-pki-", suffix=".tar")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_archive(s))
        uploaded = ".vnfm-pki.tar"
        await ex.upload(t, s, local, uploaded)
    finally:
        os.unlink(local)
    out = await ex.script(t, s, "pki_put", {"UPLOADED": uploaded, "PKI_DIR": PKI_DIR, "FILES": FILES})
    return StepResult(changed(out))


async def restore_member(ex: ScriptRunner, t: SshTarget, s: EtcdRestoreMember) -> StepResult:
    out = await ex.script(t, s, "etcd_restore_member", {"SNAPSHOT": s.path, "SHA256": s.sha256, "NAME": s.name,
                                                        "PEER_URL": s.peer_url, "K8S_VERSION": s.kubernetes_version,
                                                        "DATA_DIR": s.data_dir}, timeout=600)
    return StepResult(changed(out))


async def kubelet_server(ex: ScriptRunner, t: SshTarget, s: KubeletServer) -> StepResult:
    out = await ex.script(t, s, "kubelet_server", {"ENDPOINT": s.endpoint})
    return StepResult(changed(out))


HANDLERS: dict[type, Handler] = {
    PkiFetch: pki_fetch,
    PkiPut: pki_put,
    EtcdRestoreMember: restore_member,
    KubeletServer: kubelet_server,
}
