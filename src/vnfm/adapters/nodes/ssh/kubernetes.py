"""Kubernetes cluster steps over SSH (kubectl with the admin kubeconfig on the host)."""

from __future__ import annotations

import base64

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.kubernetes import (
    ApplyPersistentVolume,
    DeleteNode,
    DeletePersistentVolumes,
    DrainNode,
    LabelNode,
    UncordonNode,
    VimToken,
    WaitNodeReady,
)


async def wait_ready(ex: ScriptRunner, t: SshTarget, s: WaitNodeReady) -> StepResult:
    await ex.script(t, s, "wait_node_ready", {"NODE": s.node, "DEADLINE_S": f"{s.deadline_s:g}"},
                    timeout=s.deadline_s + 30)
    return StepResult(False)


async def drain(ex: ScriptRunner, t: SshTarget, s: DrainNode) -> StepResult:
    out = await ex.script(t, s, "drain_node", {"NODE": s.node, "DEADLINE_S": f"{max(1, int(s.deadline_s))}"},
                          timeout=s.deadline_s + 60)
    return StepResult(changed(out))


async def delete(ex: ScriptRunner, t: SshTarget, s: DeleteNode) -> StepResult:
    return StepResult(changed(await ex.script(t, s, "delete_node", {"NODE": s.node})))


async def uncordon(ex: ScriptRunner, t: SshTarget, s: UncordonNode) -> StepResult:
    return StepResult(changed(await ex.script(t, s, "uncordon_node", {"NODE": s.node})))


async def label(ex: ScriptRunner, t: SshTarget, s: LabelNode) -> StepResult:
    labels = "\n".join(f"{k}={v}" for k, v in s.labels)
    return StepResult(changed(await ex.script(t, s, "label_node", {"NODE": s.node, "LABELS": labels})))


async def vim_token(ex: ScriptRunner, t: SshTarget, s: VimToken) -> StepResult:
    out = await ex.script(t, s, "vim_token", {"SA": s.service_account, "NS": s.namespace})
    ca = base64.b64decode(out.get("ca_pem_b64", "")).decode()
    return StepResult(changed(out), {"token": out.get("token", ""), "ca_pem": ca})


async def apply_pv(ex: ScriptRunner, t: SshTarget, s: ApplyPersistentVolume) -> StepResult:
    out = await ex.script(t, s, "apply_pv", {"PV_NAME": s.name, "MANIFEST": s.manifest,
                                             "NFS_SERVER": s.nfs_server, "NFS_PATH": s.nfs_path})
    return StepResult(changed(out))


async def delete_pvs(ex: ScriptRunner, t: SshTarget, s: DeletePersistentVolumes) -> StepResult:
    if not s.names:
        return StepResult(False)
    return StepResult(changed(await ex.script(t, s, "delete_pvs", {"PV_NAMES": "\n".join(s.names)})))


HANDLERS: dict[type, Handler] = {
    WaitNodeReady: wait_ready,
    DrainNode: drain,
    DeleteNode: delete,
    UncordonNode: uncordon,
    LabelNode: label,
    VimToken: vim_token,
    ApplyPersistentVolume: apply_pv,
    DeletePersistentVolumes: delete_pvs,
}
