"""Connections to private registries on cluster nodes (seed 003, cluster side): containerd reads
hosts.toml (config_path) and the credentials, then per registry hosts.toml, CA and /etc/hosts."""

from __future__ import annotations

from collections.abc import Sequence

from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, gather
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps.registry import ContainerdRegistries, NodeRegistryConfig, RegistryAuthEntry


def registry_steps(c: Cluster) -> tuple[ContainerdRegistries, list[NodeRegistryConfig]]:
    ctx = c.ctx
    configs: list[NodeRegistryConfig] = []
    auth: list[RegistryAuthEntry] = []
    for r in c.p.registries:
        ca = None
        if r.certificate_path is not None:
            key = f"{r.path}.certificate_path"
            if ctx.package is None or not ctx.package.exists(r.certificate_path):
                raise OperationFailed(f"{key}: '{r.certificate_path}' is not a file of the VNF package")
            try:
                ca = ctx.package.read(r.certificate_path).decode("utf-8")
            except UnicodeDecodeError:
                raise OperationFailed(f"{key}: '{r.certificate_path}' is not a PEM certificate") from None
            if "-----BEGIN CERTIFICATE-----" not in ca:
                raise OperationFailed(f"{key}: '{r.certificate_path}' is not a PEM certificate")
        try:
            configs.append(NodeRegistryConfig(r.server, ca_pem=ca, hosts_entry=r.hosts_entry,
                                              plain_http=not r.https))
        except ValueError as e:
            raise OperationFailed(f"{r.path}: {e}") from None
        if r.username and r.password:
            auth.append(RegistryAuthEntry(r.server, r.username, r.password))
    return ContainerdRegistries(tuple(auth)), configs


async def connect(c: Cluster, nodes: Sequence[Node]) -> None:
    """Connections to the private registries on `nodes`."""
    if not c.p.registries or not nodes:
        return
    containerd, configs = registry_steps(c)

    async def one(n: Node) -> None:
        await c.ex.run(n.ssh, containerd)
        for step in configs:
            await c.ex.run(n.ssh, step)

    await gather([one(n) for n in nodes])
    c.ctx.progress(f"private registr{'y' if len(configs) == 1 else 'ies'} "
                   f"{', '.join(s.registry for s in configs)} configured on {', '.join(n.name for n in nodes)}")
