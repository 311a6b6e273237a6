"""Node access over real SSH: what the composition root gives management drivers on real clouds."""

from __future__ import annotations

from collections.abc import Sequence

from vnfm.adapters.nodes.ssh.executor import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor, SshTarget
from vnfm.domain.errors import OperationFailed
from vnfm.service.ports import NodeAccess, NodeHost


class SshAccess(NodeAccess):
    """One SSH connection per host, reused, bounded concurrency (SshExecutor). Host keys: `pins`
    holds the pinned key of each host under its `NodeHost.pin_key`; a first contact records it
    there, a later one must present it (checked during the key exchange, before any credential)."""

    def __init__(self, timeout: float = 900.0) -> None:
        self.timeout = timeout

    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> SshStepExecutor:
        by_addr = {h.address: h for h in hosts}

        def resolve(address: str) -> SshTarget:
            h = by_addr.get(address)
            if h is None:
                raise OperationFailed(f"{address} is not a host of this VNF")
            # A VNFC's node steps need root: a non-root login (a cloud image's default user)
            # runs them through `sudo -n`. A host outside the VNF (the operator's Ansible server)
            # is used as the login user it is, unless the driver says its steps need root too.
            become = (h.vnfc_id is not None if h.become is None else h.become) and h.login.username != "root"
            return SshTarget(address, username=h.login.username, password=h.login.password,
                             private_key=h.login.private_key, known_host_key=pins.get(h.pin_key),
                             become=become)

        def on_key(target: SshTarget, key: str) -> None:
            h = by_addr.get(target.host)
            if h is not None:
                pins[h.pin_key] = key

        return SshStepExecutor(SshExecutor(on_host_key=on_key), resolve, timeout=self.timeout)
