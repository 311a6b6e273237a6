"""Registry steps over SSH: a Docker registry served on a host, a node's connection to private
registries (containerd hosts.toml, CAs, credentials)."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh import render
from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.nodes.ssh.hosts import hosts_entries
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.hosts import SetHostsEntries
from vnfm.nodesteps.registry import ContainerdRegistries, NodeRegistryConfig, RegistryClientConfig, RegistryServe


async def serve(ex: ScriptRunner, t: SshTarget, step: RegistryServe) -> StepResult:
    out = await ex.script(t, step, "registry_serve", {
        "REGISTRY_CONFIG": render.render_registry_config(step),
        "CONFIG_DIR": step.config_dir,
        "PIDFILE": step.pidfile,
        "STORAGE_DIR": step.storage_dir,
        "PORT": str(step.port),
        "DEADLINE_S": str(int(step.deadline_s)),
        "TLS_CERT": (step.tls_cert_pem or "").strip(),
    }, secrets={"TLS_KEY": (step.tls_key_pem or "").strip()}, timeout=step.deadline_s + 30)
    return StepResult(changed(out))


async def client(ex: ScriptRunner, t: SshTarget, step: RegistryClientConfig) -> StepResult:
    out = await ex.script(t, step, "registry_client", {
        "REGISTRY": step.registry,
        "HOSTS_TOML": render.render_containerd_hosts_toml(step).rstrip("\n"),
        "CA_PEM": (step.ca_pem or "").strip(),
        "PLAIN_HTTP": "1" if step.plain_http else "0",
        "REGISTRIES_CONF": render.render_registries_conf(step).rstrip("\n"),
        "CERTS_DIR": step.certs_dir,
        "CONTAINERS_CERTS_DIR": step.containers_certs_dir,
        "REGISTRIES_CONF_DIR": step.registries_conf_dir,
    })
    did = changed(out)
    if step.hosts_entry is not None:
        addr, name = step.hosts_entry
        hosts = SetHostsEntries(((addr, (name,)),), block=f"vnfm-registry-{step.registry_host}"[:63])
        did = (await hosts_entries(ex, t, hosts)).changed or did
    return StepResult(did)


async def containerd_registries(ex: ScriptRunner, t: SshTarget, s: ContainerdRegistries) -> StepResult:
    out = await ex.script(t, s, "containerd_registries",
                          {"CONFIG_PATH": s.config_path, "CONFIG_FILE": s.config_file, "DEADLINE_S": "60"},
                          {"AUTH_V2": s.auth_block("io.containerd.grpc.v1.cri"),
                           "AUTH_V3": s.auth_block("io.containerd.cri.v1.images")})
    return StepResult(changed(out))


HANDLERS: dict[type, Handler] = {
    RegistryServe: serve,
    RegistryClientConfig: client,
    NodeRegistryConfig: client,
    ContainerdRegistries: containerd_registries,
}
