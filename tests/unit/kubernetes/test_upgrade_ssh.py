"""The upgrade steps over SSH with a recording stand-in for the transport: which script runs with
which inputs, the snapshot copy goes over SFTP (never in a command line or variable)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import Result, SshTarget
from vnfm.nodesteps.upgrade import (
    SNAPSHOT_DIR,
    EtcdSnapshotPut,
    EtcdSnapshotSave,
    K8sPackages,
    KubeadmRevertControlPlane,
    KubeadmUpgradeApply,
    KubeadmUpgradeNode,
    NodeAtVersion,
)

PATH = f"{SNAPSHOT_DIR}/etcd-x.db"


class Recording:
    def __init__(self, stdout: str = "@@ changed=true\n") -> None:
        self.calls: list[dict[str, Any]] = []
        self.uploads: list[tuple[bytes, str]] = []
        self.stdout = stdout

    async def run_script(self, target: SshTarget, script_text: str, **kw: Any) -> Result:
        self.calls.append({"script": script_text, **kw})
        return Result(0, self.stdout, "")

    async def upload(self, target: SshTarget, local: str, remote: str, **kw: Any) -> None:
        self.uploads.append((Path(local).read_bytes(), remote))

    async def close(self) -> None:
        pass


async def test_upgrade_steps_run_their_scripts() -> None:
    ssh = Recording("@@ changed=true\n@@ sha256=" + "a" * 64 + "\n@@ size=42\n@@ revision=7\n@@ keys=3\n")
    ex = SshStepExecutor(ssh, {"h": SshTarget("h", username="u", password="p")})
    res = await ex.run("h", EtcdSnapshotSave(path=PATH, keep=2))
    assert res.changed and res.data == {"sha256": "a" * 64, "size": 42, "revision": 7, "keys": 3}
    assert ssh.calls[-1]["name"] == "etcd_snapshot_save"
    assert ssh.calls[-1]["stdin_vars"]["SNAPSHOT"] == PATH and ssh.calls[-1]["stdin_vars"]["KEEP"] == "2"
    await ex.run("h", K8sPackages("1.31.2", ("kubelet", "kubectl")))
    assert ssh.calls[-1]["stdin_vars"] == {"PACKAGES": "kubelet kubectl", "K8S_VERSION": "1.31.2"}
    for step, mode in ((KubeadmUpgradeApply("m-0", "1.31.2"), "apply"),
                       (KubeadmUpgradeNode("m-1", "1.31.2", True), "node-cp"),
                       (KubeadmUpgradeNode("w-0", "1.31.2", False), "node-worker"),
                       (KubeadmRevertControlPlane("m-0", "1.30.4"), "revert")):
        await ex.run("h", step)
        assert ssh.calls[-1]["name"] == "kubeadm_upgrade" and ssh.calls[-1]["stdin_vars"]["MODE"] == mode
    await ex.run("h", NodeAtVersion("w-0", "1.31.2", 30))
    assert ssh.calls[-1]["stdin_vars"] == {"NODE": "w-0", "K8S_VERSION": "1.31.2", "DEADLINE_S": "30"}
    raw = b"snapshot bytes"
    content = base64.b64encode(raw).decode()
    await ex.run("h", EtcdSnapshotPut(PATH, hashlib.sha256(raw).hexdigest(), content))
    assert ssh.uploads[-1][0] == raw
    assert content not in str(ssh.calls[-1])
