"""Load-balancing steps over SSH: a whole HAProxy configuration (checked, hitless reload), backends,
keepalived holding a VIP, one owner's part of an external load balancer (LbFrontends)."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh import render
from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.lb import HaproxyApplyConfig, HaproxySetBackends, KeepalivedVip, LbFrontends


async def apply_config(ex: ScriptRunner, t: SshTarget, step: HaproxyApplyConfig) -> StepResult:
    out = await ex.script(t, step, "haproxy_apply",
                          {"HAPROXY_CFG": step.config, "CFG_PATH": step.config_path, "PIDFILE": step.pidfile,
                           "DEADLINE_S": str(int(step.deadline_s))},
                          timeout=step.deadline_s + 30)
    data = {"action": out.get("action", ""), "master_pid": int(out.get("master_pid", "0"))}
    return StepResult(changed(out), data)


async def set_backends(ex: ScriptRunner, t: SshTarget, step: HaproxySetBackends) -> StepResult:
    return await apply_config(ex, t, HaproxyApplyConfig(render.render_haproxy_cfg(step), step.config_path,
                                                        step.pidfile))


async def keepalived(ex: ScriptRunner, t: SshTarget, s: KeepalivedVip) -> StepResult:
    out = await ex.script(t, s, "keepalived", {"VIP": s.vip, "LOCAL_ADDR": s.local_address,
                                               "PRIORITY": str(s.priority), "PEERS": ",".join(s.peers),
                                               "ROUTER_ID": str(s.router_id)})
    return StepResult(changed(out))


async def lb_frontends(ex: ScriptRunner, t: SshTarget, step: LbFrontends) -> StepResult:
    """The owner's file CONF_DIR/<owner>.cfg and the global settings beside the directory are rendered
    here from the validated step and travel as data: the script never interprets them."""
    out = await ex.script(t, step, "lb_frontends",
                          {"CONF_DIR": step.conf_dir, "MAIN_CFG": render.lb_main_config_path(step.conf_dir),
                           "MAIN_TEXT": render.render_lb_main(step), "OWNER": step.owner,
                           "OWNER_TEXT": render.render_lb_owner(step),
                           "PORTS": " ".join(str(f.port) for f in step.frontends),
                           "PIDFILE": step.pidfile, "DEADLINE_S": str(max(1, int(step.deadline_s)))},
                          timeout=step.deadline_s * 2 + 30)
    return StepResult(changed(out), {"ports": [f.port for f in step.frontends], "action": out.get("action", ""),
                                     "master_pid": int(out.get("master_pid", "0"))})


HANDLERS: dict[type, Handler] = {
    HaproxyApplyConfig: apply_config,
    HaproxySetBackends: set_backends,
    KeepalivedVip: keepalived,
    LbFrontends: lb_frontends,
}
