"""Private-registry connections on the twin: containerd hosts.toml, CAs, credentials (hashes only)."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost, sha
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.registry import ContainerdRegistries, NodeRegistryConfig, RegistryClientConfig


def registry_client(tw: TwinHost, host: str, sid: str, step: RegistryClientConfig) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        regs = h.setdefault("registries", {})
        want = {"scheme": "http" if step.plain_http else "https",
                "hosts_toml": f"{step.certs_dir}/{step.registry}/hosts.toml",
                "ca_sha256": sha(step.ca_pem.strip()) if step.ca_pem else None,
                "hosts_entry": list(step.hosts_entry) if step.hosts_entry else None}
        changed = regs.get(step.registry) != want
        regs[step.registry] = want
        if step.hosts_entry is not None:
            block = f"vnfm-registry-{step.registry_host}"[:63]
            blocks = h.setdefault("etc_hosts", {})
            entry = [[step.hosts_entry[0], [step.hosts_entry[1]]]]
            if blocks.get(block) != entry:
                blocks[block] = entry
                h["etc_hosts_writes"] = h.get("etc_hosts_writes", 0) + 1
                changed = True
        return changed

    return StepResult(tw.tx(fn))


def containerd_registries(tw: TwinHost, host: str, sid: str, step: ContainerdRegistries) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        if not h.get("prepared"):
            raise StepFailed(host, step, f"{step.config_file} does not exist: containerd is not installed "
                                         "(prepare the node first)")
        # credentials: only which registry has some, and a hash (never the secrets themselves)
        want = {"config_path": step.config_path,
                "auth": {a.server: sha(f"{a.username}:{a.password}") for a in step.auth}}
        cur = h.get("containerd")
        if cur is not None and {k: cur[k] for k in want} == want:
            return False
        h["containerd"] = {**want, "restarts": (cur or {}).get("restarts", 0) + 1}
        return True

    return StepResult(tw.tx(fn))


HANDLERS: dict[type, Any] = {
    RegistryClientConfig: registry_client,
    NodeRegistryConfig: registry_client,
    ContainerdRegistries: containerd_registries,
}
