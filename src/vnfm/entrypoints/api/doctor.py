"""GET /vnfm/v1/doctor (admin): what is wrong with this server, one finding a line with what to do.

Checked here, where the settings, the database and the network position are the server's own:
the configuration (what is fine on a laptop and wrong on a network), the database, the LCM engine,
every registered VIM (the registry's own probe: Keystone answers and takes the credentials), and
SSH access to the VNFCs of the instantiated VNFs on real clouds (TCP 22 answers with an SSH
banner, all nodes at once, each within a deadline). `vnfm doctor` prints the findings.

A finding: {"check", "status" (ok | warning | problem), "detail", "fix"}; problems make `vnfm
doctor` exit 1. Nothing here changes anything.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.bootstrap import App
from vnfm.domain.model import InstantiationState, Vim
from vnfm.entrypoints.api.common import app_of
from vnfm.entrypoints.api.routing import Router

router = Router()
PROBE_TIMEOUT = 15.0  # seconds for one VIM's probe
SSH_TIMEOUT = 5.0  # seconds for one node's SSH banner


@dataclass
class Finding:
    check: str
    status: str  # ok, warning, problem
    detail: str
    fix: str = ""


def config_findings(core: App) -> list[Finding]:
    s = core.settings
    out: list[Finding] = []
    exposed = not s.loopback_only
    if exposed and not s.auth_configured:
        out.append(Finding("config.auth", "problem", f"authentication is off on {s.host} (--insecure-no-auth)",
                           "configure oauth2_clients or an external authorization server"))
    elif exposed and s.auth_token:
        out.append(Finding("config.auth", "warning", "the static auth_token makes every holder an admin",
                           "use oauth2_clients (or oauth2_jwks_url / oauth2_introspection_url)"))
    if exposed and not s.tls:
        out.append(Finding("config.tls", "problem", f"HTTP without TLS on {s.host}: tokens travel in clear",
                           "set tls_cert and tls_key, or serve behind a TLS-terminating proxy on loopback"))
    if s.fault_injection:
        out.append(Finding("config.fault_injection", "problem", "the simulator's fault-injection API is mounted",
                           "fault_injection = false (it is for tests and demos)"))
    if exposed and s.simulator:
        out.append(Finding("config.simulator", "warning", "the simulated cloud is a VIM of this server",
                           "simulator = false in production (deploy/vnfm.toml)"))
    if exposed and s.database_url.startswith("sqlite"):
        out.append(Finding("config.database", "warning", "SQLite: one process only, no standby",
                           "database_url = postgresql+psycopg://... (docs/openstack.md, PostgreSQL)"))
    if not s.secret_key:
        out.append(Finding("config.secret_key", "warning",
                           f"the key of the stored credentials is {s.data_dir / 'secret.key'}",
                           "back it up (without it the stored VIM credentials are lost), or set VNFM_SECRET_KEY"))
    if not out:
        out.append(Finding("config", "ok", "nothing to say about the settings"))
    return out


def database_finding(core: App) -> Finding:
    try:
        core.db_ping()
    except Exception as exc:  # any driver error; its text can hold the URL: the type only
        return Finding("database", "problem", f"the database does not answer ({type(exc).__name__})",
                       "check database_url and that the database runs (vnfm server says which at start)")
    return Finding("database", "ok", "answers")


def engine_finding(core: App) -> Finding:
    if not core.settings.run_engine:
        return Finding("engine", "ok", "not run in this process (another process runs operations)")
    if core.engine.is_running:
        return Finding("engine", "ok", "runs")
    return Finding("engine", "problem", "the LCM engine does not run: operations are not processed",
                   "see the server's log for why it stopped; restart the server")


async def vim_findings(core: App) -> list[Finding]:
    """Every VIM probed at once (each probe in a worker thread, within PROBE_TIMEOUT)."""
    vims = core.vims.list()
    out: list[Finding] = []
    if not any(v.is_default for v in vims):
        out.append(Finding("vims.default", "warning", "no default VIM: every request must name one",
                           "vnfm vim register --openrc FILE --is-default"))

    async def one(vim: Vim) -> Finding:
        check = f"vim {vim.name} ({vim.id})"
        probe = core.vims.probes.get(vim.vim_type)
        if probe is None:
            return Finding(check, "ok", f"{vim.vim_type}: registered (no probe for this type)")
        try:
            failed = await asyncio.wait_for(off_loop(probe, vim), PROBE_TIMEOUT)
        except TimeoutError:
            failed = f"no answer within {PROBE_TIMEOUT:g} s"
        if failed:
            return Finding(check, "problem", failed,
                           f"check its accessInfo (vnfm vim show {vim.id}); register it again with "
                           "--openrc / --os-cloud once `openstack token issue` works from this host")
        return Finding(check, "ok", f"{vim.vim_type}: answers and accepts the credentials")

    return out + list(await asyncio.gather(*(one(v) for v in vims)))


def ssh_targets(core: App) -> list[tuple[str, str]]:
    """(label, address) of every VNFC of the instantiated VNFs on a VIM that is not simulated."""
    simulated = {v.id for v in core.vims.list() if v.vim_type == "simulator"}
    targets: list[tuple[str, str]] = []
    for inst in core.instances.list():
        if inst.instantiation_state != InstantiationState.INSTANTIATED or inst.vim_id in simulated:
            continue
        for vnfc in inst.resources.vnfcs:
            addr = next((c.floating_ip or (c.ip_addresses[0] if c.ip_addresses else None)
                         for c in vnfc.cps if c.floating_ip or c.ip_addresses), None)
            if addr:
                targets.append((f"ssh {inst.vnf_instance_name or inst.id} {vnfc.name or vnfc.id}", addr))
    return targets


async def ssh_banner(address: str, port: int = 22, timeout: float = SSH_TIMEOUT) -> str | None:
    """None when address:port answers with an SSH banner within `timeout`, else why not."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address, port), timeout)
    except (OSError, TimeoutError) as exc:
        return f"{address}:{port} does not answer ({type(exc).__name__}: {exc or 'no answer in time'})"
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except (OSError, TimeoutError):
        line = b""
    finally:
        writer.close()
    if not line.startswith(b"SSH-"):
        return f"{address}:{port} answers but not as an SSH server ({line[:40]!r})"
    return None


async def ssh_findings(targets: list[tuple[str, str]], port: int = 22, timeout: float = SSH_TIMEOUT) -> list[Finding]:
    if not targets:
        return [Finding("ssh", "ok", "no VNFC on a real cloud to reach")]
    results = await asyncio.gather(*(ssh_banner(addr, port, timeout) for _, addr in targets))
    return [Finding(label, "problem", why,
                    "let TCP 22 in from this host (security group, route, floating IP); see docs/openstack.md")
            if why else Finding(label, "ok", f"{addr}: SSH answers")
            for (label, addr), why in zip(targets, results, strict=True)]


async def run_checks(core: App) -> list[Finding]:
    findings = config_findings(core) + [await off_loop(database_finding, core), engine_finding(core)]
    if findings[-2].status != "ok":  # without the database there are no VIMs or instances to read
        return findings
    targets = await off_loop(ssh_targets, core)
    vims, ssh = await asyncio.gather(vim_findings(core), ssh_findings(targets))
    return findings + vims + ssh


@router.get("/vnfm/v1/doctor")
async def doctor(request: Request) -> dict[str, Any]:
    findings = await run_checks(app_of(request))
    return {"findings": [asdict(f) for f in findings],
            "problems": sum(f.status == "problem" for f in findings)}
