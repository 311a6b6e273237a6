"""Storage steps over SSH: a volume formatted and mounted, NFS exports (nfs-ganesha), the NFS client."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh import render
from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.storage import InstallNfsClient, NfsExport, NfsExports, PrepareVolume


def ganesha_conf(step: NfsExports) -> str:
    """One nfs-ganesha configuration with every export of `step`: the EXPORT blocks rendered for
    each NfsExport, under the shared core/log sections rendered for the first."""
    texts = [render.render_ganesha_conf(e) for e in step.exports]
    head, sep, _ = texts[0].partition("EXPORT {\n")
    tail = texts[0][texts[0].index("LOG {\n"):]
    blocks = []
    for text in texts:
        start, end = text.index("EXPORT {\n"), text.index("LOG {\n")
        blocks.append(text[start:end])
    assert sep and tail
    return head + "".join(blocks) + tail


async def nfs_exports(ex: ScriptRunner, t: SshTarget, s: NfsExports) -> StepResult:
    first = s.exports[0]
    out = await ex.script(t, s, "nfs_export", {
        "GANESHA_CONF": ganesha_conf(s),
        "CONF_PATH": first.config_path,
        "PIDFILE": first.pidfile,
        "EXPORT_PATHS": "\n".join(e.path for e in s.exports),
        "PORT": str(first.port),
        "CHECK_ADDR": first.bind_addr or "127.0.0.1",
        "DEADLINE_S": str(int(first.deadline_s)),
    }, timeout=first.deadline_s + 30)
    return StepResult(changed(out), {"pseudo": [e.pseudo_path for e in s.exports]})


async def nfs_export(ex: ScriptRunner, t: SshTarget, step: NfsExport) -> StepResult:
    res = await nfs_exports(ex, t, NfsExports((step,)))
    return StepResult(res.changed, {"pseudo": step.pseudo_path})


async def prepare_volume(ex: ScriptRunner, t: SshTarget, s: PrepareVolume) -> StepResult:
    out = await ex.script(t, s, "prepare_volume", {
        "VOLUME_ID": s.volume_id, "DEVICE": s.device or "", "FS_TYPE": s.fs_type, "MOUNT_TO": s.mount_to,
        "FSTAB": s.fstab, "DEADLINE_S": "120"}, timeout=300)
    return StepResult(changed(out), {"device": out.get("device", ""), "formatted": out.get("formatted") == "true"})


async def nfs_client(ex: ScriptRunner, t: SshTarget, s: InstallNfsClient) -> StepResult:
    return StepResult(changed(await ex.script(t, s, "nfs_client", {}, timeout=600)))


HANDLERS: dict[type, Handler] = {
    NfsExport: nfs_export,
    NfsExports: nfs_exports,
    PrepareVolume: prepare_volume,
    InstallNfsClient: nfs_client,
}
