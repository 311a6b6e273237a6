"""Runs node steps over SSH with the idempotent scripts in ./scripts.

Every script takes its inputs as shell variables that travel on stdin (never argv), secrets as
exported variables the script unsets once used, and reports on stdout with lines
`@@ key=value` (`changed` is always one of them). Each step family has its handlers in a module
of this package (etcd, lb, hosts, storage, registry, registry_vnf, kubernetes, kubeadm);
`handlers.py` lists them. Files too large for stdin (images) go over SFTP (`upload`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

from vnfm.adapters.nodes.ssh.base import Handler, parse_output, script_text
from vnfm.adapters.nodes.ssh.handlers import ALL_HANDLERS
from vnfm.adapters.remote.ssh import RemoteError, SshExecutor, SshTarget
from vnfm.domain.secrets import scrub
from vnfm.nodesteps.base import NodeStep, StepExecutor, StepFailed, StepResult

log = logging.getLogger(__name__)

class SshStepExecutor(StepExecutor):
    """`resolve(host)` gives the SshTarget of a host name/address used by the caller. `handlers`
    (step type -> handler) defaults to every family's (vnfm.adapters.nodes.ssh.handlers)."""

    def __init__(
        self,
        ssh: SshExecutor,
        resolve: Callable[[str], SshTarget] | Mapping[str, SshTarget],
        timeout: float = 120.0,
        handlers: Mapping[type[NodeStep], Handler] | None = None,
    ) -> None:
        self.ssh = ssh
        self._resolve = resolve
        self.timeout = timeout
        self._handlers = dict(ALL_HANDLERS if handlers is None else handlers)

    def target(self, host: str) -> SshTarget:
        r = self._resolve
        return r[host] if isinstance(r, Mapping) else r(host)

    async def run(self, host: str, step: NodeStep) -> StepResult:
        handler = self._handlers.get(type(step))
        if handler is None:
            raise StepFailed(host, step, f"step {type(step).__name__} is not supported over SSH")
        target = self.target(host)
        t0 = time.monotonic()
        try:
            res = await handler(self, target, step)
        except RemoteError as e:
            if isinstance(e, StepFailed):
                raise
            raise StepFailed(host, step, scrub(e.detail)) from None
        log.info(
            "%s on %s: %s (%.2fs)",
            step.describe(), host, "changed" if res.changed else "unchanged", time.monotonic() - t0,
        )
        return res

    async def verify_host_keys(self, hosts: Sequence[str]) -> None:
        """Connect to every host: a first contact pins its key, a later one must present the pinned
        key (HostKeyChanged otherwise, before any credential is sent)."""
        await self.ssh.fan_out([self.target(h) for h in dict.fromkeys(hosts)], self.ssh.connect)

    async def close(self) -> None:
        await self.ssh.close()

    async def upload(self, target: SshTarget, step: NodeStep, local_path: str, remote_path: str,
                     timeout: float | None = None) -> None:
        """Copy `local_path` to the target over SFTP; StepFailed (scrubbed) when it cannot."""
        try:
            await self.ssh.upload(target, local_path, remote_path, timeout=timeout or self.timeout)
        except RemoteError as e:
            raise StepFailed(target.host, step, scrub(e.detail)) from None

    async def script(
        self,
        target: SshTarget,
        step: NodeStep,
        name: str,
        inputs: Mapping[str, str],
        secrets: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, str]:
        """Run script `name`; StepFailed with the tail of its stderr (scrubbed) when it fails; its
        `@@ key=value` lines otherwise."""
        res = await self.ssh.run_script(
            target,
            script_text(name),
            env_secrets=secrets,
            stdin_vars=inputs,
            timeout=timeout or self.timeout,
            name=name,
        )
        if not res.ok:
            tail = "\n".join(res.stderr.strip().splitlines()[-15:]) or f"exit status {res.exit_status}"
            # the error text leaves the host (StepFailed -> problem details, events, logs): no URL
            # credentials (apt/curl echo proxy URLs) and none of the secrets the script was given
            raise StepFailed(target.host, step, scrub(tail, (secrets or {}).values()))
        return parse_output(res.stdout)
