"""/etc/hosts blocks over SSH."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh import render
from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.hosts import SetHostsEntries


async def hosts_entries(ex: ScriptRunner, t: SshTarget, step: SetHostsEntries) -> StepResult:
    out = await ex.script(t, step, "hosts_entries", {
        "BLOCK": step.block,
        "BLOCK_TEXT": render.render_hosts_block(step.block, step.entries).rstrip("\n"),
        "HOSTS_FILE": step.hosts_file,
    })
    return StepResult(changed(out))


HANDLERS: dict[type, Handler] = {SetHostsEntries: hosts_entries}
