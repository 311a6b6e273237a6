"""Runs node steps over SSH with the idempotent scripts in vnfm/nodesteps/scripts/.

Every script takes its inputs as shell variables that travel on stdin (never argv), secrets as
exported variables the script unsets once used, and reports on stdout with lines
`@@ key=value` (`changed` is always one of them).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from vnfm.adapters.remote.ssh import RemoteError, SshExecutor, SshTarget
from vnfm.domain.secrets import scrub
from vnfm.nodesteps import render
from vnfm.nodesteps.steps import (
    EtcdHealth,
    EtcdMemberAdd,
    EtcdMemberList,
    EtcdMemberRemove,
    EtcdStart,
    EtcdStop,
    HaproxyApplyConfig,
    HaproxySetBackends,
    NfsExport,
    NodeStep,
    RegistryClientConfig,
    RegistryServe,
    SetHostsEntries,
    StepExecutor,
    StepFailed,
    StepResult,
    _EtcdClientStep,
)

log = logging.getLogger(__name__)

SCRIPT_NAMES = (
    "etcd_start",
    "etcd_stop",
    "etcd_health",
    "etcd_member_list",
    "etcd_member_remove",
    "etcd_member_add",
    "haproxy_apply",
    "hosts_entries",
    "nfs_export",
    "registry_serve",
    "registry_client",
)


@cache
def script_text(name: str) -> str:
    return resources.files("vnfm.nodesteps").joinpath("scripts", f"{name}.sh").read_text()


def parse_output(stdout: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        if line.startswith("@@ ") and "=" in line:
            k, _, v = line[3:].partition("=")
            out[k.strip()] = v
    return out


class SshStepExecutor(StepExecutor):
    """`resolve(host)` gives the SshTarget of a host name/address used by the caller."""

    def __init__(
        self,
        ssh: SshExecutor,
        resolve: Callable[[str], SshTarget] | Mapping[str, SshTarget],
        timeout: float = 120.0,
    ) -> None:
        self.ssh = ssh
        self._resolve = resolve
        self.timeout = timeout
        self._handlers: dict[type[NodeStep], Callable[[SshTarget, Any], Awaitable[StepResult]]] = {
            EtcdStart: self._etcd_start,
            EtcdStop: self._etcd_stop,
            EtcdHealth: self._etcd_health,
            EtcdMemberList: self._etcd_member_list,
            EtcdMemberRemove: self._etcd_member_remove,
            EtcdMemberAdd: self._etcd_member_add,
            HaproxyApplyConfig: self._haproxy_apply,
            HaproxySetBackends: self._haproxy_set_backends,
            SetHostsEntries: self._hosts_entries,
            NfsExport: self._nfs_export,
            RegistryServe: self._registry_serve,
            RegistryClientConfig: self._registry_client,
        }

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
            res = await handler(target, step)
        except RemoteError as e:
            if isinstance(e, StepFailed):
                raise
            raise StepFailed(host, step, scrub(e.detail)) from None
        log.info(
            "%s on %s: %s (%.2fs)",
            step.describe(), host, "changed" if res.changed else "unchanged", time.monotonic() - t0,
        )
        return res

    # ------------------------------------------------------------------ plumbing
    async def _script(
        self,
        target: SshTarget,
        step: NodeStep,
        name: str,
        inputs: Mapping[str, str],
        secrets: Mapping[str, str] | None = None,
        timeout: float | None = None,
        text: str | None = None,
    ) -> dict[str, str]:
        """Run script `name` (`text`, or the nodesteps script of that name); StepFailed with the
        tail of its stderr (scrubbed) when it fails; its `@@ key=value` lines otherwise."""
        res = await self.ssh.run_script(
            target,
            script_text(name) if text is None else text,
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

    @staticmethod
    def _changed(out: Mapping[str, str]) -> bool:
        return out.get("changed") == "true"

    @staticmethod
    def _etcd_env(step: _EtcdClientStep) -> dict[str, str]:
        if step.tls is None:
            return {}
        return {"ETCDCTL_CACERT": step.tls.cacert, "ETCDCTL_CERT": step.tls.cert, "ETCDCTL_KEY": step.tls.key}

    # ------------------------------------------------------------------ etcd
    async def _etcd_start(self, t: SshTarget, step: EtcdStart) -> StepResult:
        out = await self._script(
            t,
            step,
            "etcd_start",
            {
                "ETCD_NAME": step.name,
                "PEER_URL": step.peer_url,
                "CLIENT_URL": step.client_url,
                "INITIAL_CLUSTER": ",".join(f"{n}={u}" for n, u in step.initial_cluster),
                "CLUSTER_STATE": step.state,
                "TOKEN": step.token,
                "DATA_DIR": step.data_dir,
            },
        )
        return StepResult(self._changed(out), {"pid": int(out.get("pid", "0"))})

    async def _etcd_stop(self, t: SshTarget, step: EtcdStop) -> StepResult:
        out = await self._script(
            t, step, "etcd_stop", {"WIPE": "1" if step.wipe_data else "0", "DATA_DIR": step.data_dir,
                                   "DEADLINE_S": "10"}
        )
        return StepResult(self._changed(out))

    async def _etcd_health(self, t: SshTarget, step: EtcdHealth) -> StepResult:
        out = await self._script(
            t,
            step,
            "etcd_health",
            {"ENDPOINTS": ",".join(step.endpoints), "WAIT_S": str(int(step.wait_s + 0.999))},
            self._etcd_env(step),
            timeout=step.wait_s + 30,
        )
        per: dict[str, bool] = {}
        try:
            for e in json.loads(out.get("health") or "[]"):
                per[str(e.get("endpoint"))] = bool(e.get("health"))
        except (ValueError, AttributeError):
            pass
        return StepResult(False, {"healthy": out.get("healthy") == "true", "endpoints": per})

    async def _etcd_member_list(self, t: SshTarget, step: EtcdMemberList) -> StepResult:
        out = await self._script(
            t, step, "etcd_member_list", {"ENDPOINTS": ",".join(step.endpoints)}, self._etcd_env(step)
        )
        try:
            raw = json.loads(out["members"]).get("members", [])
        except (KeyError, ValueError) as e:
            raise StepFailed(t.host, step, f"unreadable member list: {e}") from None
        members = [
            {
                "id": format(int(m["ID"]), "x"),
                "name": m.get("name", ""),
                "peer_urls": list(m.get("peerURLs", [])),
                "client_urls": list(m.get("clientURLs", [])),
                "learner": bool(m.get("isLearner", False)),
            }
            for m in raw
        ]
        return StepResult(False, {"members": members})

    async def _etcd_member_remove(self, t: SshTarget, step: EtcdMemberRemove) -> StepResult:
        out = await self._script(
            t,
            step,
            "etcd_member_remove",
            {"ENDPOINTS": ",".join(step.endpoints), "MEMBER_NAME": step.name,
             "DEADLINE_S": str(int(step.deadline_s)), "PEER_URL": step.peer_url},
            self._etcd_env(step),
            timeout=step.deadline_s + 30,
        )
        return StepResult(self._changed(out), {"id": out.get("id", "")})

    async def _etcd_member_add(self, t: SshTarget, step: EtcdMemberAdd) -> StepResult:
        out = await self._script(
            t,
            step,
            "etcd_member_add",
            {"ENDPOINTS": ",".join(step.endpoints), "MEMBER_NAME": step.name, "PEER_URL": step.peer_url,
             "DEADLINE_S": str(int(step.deadline_s))},
            self._etcd_env(step),
            timeout=step.deadline_s + 30,
        )
        ic = out.get("initial_cluster", "")
        pairs = [tuple(p.split("=", 1)) for p in ic.split(",") if "=" in p]
        return StepResult(self._changed(out), {"initial_cluster": ic, "members": pairs})

    # ------------------------------------------------------------------ haproxy
    async def _haproxy_apply(self, t: SshTarget, step: HaproxyApplyConfig) -> StepResult:
        out = await self._script(
            t,
            step,
            "haproxy_apply",
            {"HAPROXY_CFG": step.config, "CFG_PATH": step.config_path, "PIDFILE": step.pidfile,
             "DEADLINE_S": str(int(step.deadline_s))},
            timeout=step.deadline_s + 30,
        )
        data = {"action": out.get("action", ""), "master_pid": int(out.get("master_pid", "0"))}
        return StepResult(self._changed(out), data)

    async def _haproxy_set_backends(self, t: SshTarget, step: HaproxySetBackends) -> StepResult:
        apply = HaproxyApplyConfig(render.render_haproxy_cfg(step), step.config_path, step.pidfile)
        return await self._haproxy_apply(t, apply)

    # ------------------------------------------------------------------ hosts
    async def _hosts_entries(self, t: SshTarget, step: SetHostsEntries) -> StepResult:
        out = await self._script(
            t,
            step,
            "hosts_entries",
            {
                "BLOCK": step.block,
                "BLOCK_TEXT": render.render_hosts_block(step.block, step.entries).rstrip("\n"),
                "HOSTS_FILE": step.hosts_file,
            },
        )
        return StepResult(self._changed(out))

    # ------------------------------------------------------------------ nfs
    async def _nfs_export(self, t: SshTarget, step: NfsExport) -> StepResult:
        check_addr = step.bind_addr or "127.0.0.1"
        out = await self._script(
            t,
            step,
            "nfs_export",
            {
                "GANESHA_CONF": render.render_ganesha_conf(step),
                "CONF_PATH": step.config_path,
                "PIDFILE": step.pidfile,
                "EXPORT_PATHS": step.path,
                "PORT": str(step.port),
                "CHECK_ADDR": check_addr,
                "DEADLINE_S": str(int(step.deadline_s)),
            },
            timeout=step.deadline_s + 30,
        )
        return StepResult(self._changed(out), {"pseudo": step.pseudo_path})

    # ------------------------------------------------------------------ registry
    async def _registry_serve(self, t: SshTarget, step: RegistryServe) -> StepResult:
        out = await self._script(
            t,
            step,
            "registry_serve",
            {
                "REGISTRY_CONFIG": render.render_registry_config(step),
                "CONFIG_DIR": step.config_dir,
                "PIDFILE": step.pidfile,
                "STORAGE_DIR": step.storage_dir,
                "PORT": str(step.port),
                "DEADLINE_S": str(int(step.deadline_s)),
                "TLS_CERT": (step.tls_cert_pem or "").strip(),
            },
            secrets={"TLS_KEY": (step.tls_key_pem or "").strip()},
            timeout=step.deadline_s + 30,
        )
        return StepResult(self._changed(out))

    async def _registry_client(self, t: SshTarget, step: RegistryClientConfig) -> StepResult:
        out = await self._script(
            t,
            step,
            "registry_client",
            {
                "REGISTRY": step.registry,
                "HOSTS_TOML": render.render_containerd_hosts_toml(step).rstrip("\n"),
                "CA_PEM": (step.ca_pem or "").strip(),
                "PLAIN_HTTP": "1" if step.plain_http else "0",
                "REGISTRIES_CONF": render.render_registries_conf(step).rstrip("\n"),
                "CERTS_DIR": step.certs_dir,
                "CONTAINERS_CERTS_DIR": step.containers_certs_dir,
                "REGISTRIES_CONF_DIR": step.registries_conf_dir,
            },
        )
        changed = self._changed(out)
        if step.hosts_entry is not None:
            addr, name = step.hosts_entry
            hosts = SetHostsEntries(((addr, (name,)),), block=f"vnfm-registry-{step.registry_host}"[:63])
            changed = (await self._hosts_entries(t, hosts)).changed or changed
        return StepResult(changed)
