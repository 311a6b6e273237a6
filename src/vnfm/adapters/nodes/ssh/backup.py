"""The restore drill over SSH (nodesteps/backup.py): a scratch etcd from the snapshot, on the host."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.backup import EtcdRestoreDrill
from vnfm.nodesteps.base import StepResult


async def restore_drill(ex: ScriptRunner, t: SshTarget, s: EtcdRestoreDrill) -> StepResult:
    out = await ex.script(t, s, "etcd_restore_drill", {"SNAPSHOT": s.path, "SHA256": s.sha256, "KEYS": str(s.keys),
                                                       "REVISION": str(s.revision), "PORT": str(s.port)},
                          timeout=600)
    return StepResult(False, {"keys": int(out.get("keys") or 0), "live_keys": int(out.get("live_keys") or 0),
                              "revision": int(out.get("revision") or 0)})


HANDLERS: dict[type, Handler] = {EtcdRestoreDrill: restore_drill}
