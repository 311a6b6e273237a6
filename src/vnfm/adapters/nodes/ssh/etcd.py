"""etcd membership steps over SSH (etcdctl v3 on the host)."""

from __future__ import annotations

import json

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.etcd import (
    EtcdHealth,
    EtcdMemberAdd,
    EtcdMemberList,
    EtcdMemberPromote,
    EtcdMemberRemove,
    EtcdStart,
    EtcdStop,
    _EtcdClientStep,
)


def _tls_env(step: _EtcdClientStep) -> dict[str, str]:
    if step.tls is None:
        return {}
    return {"ETCDCTL_CACERT": step.tls.cacert, "ETCDCTL_CERT": step.tls.cert, "ETCDCTL_KEY": step.tls.key}


async def start(ex: ScriptRunner, t: SshTarget, step: EtcdStart) -> StepResult:
    out = await ex.script(t, step, "etcd_start", {
        "ETCD_NAME": step.name,
        "PEER_URL": step.peer_url,
        "CLIENT_URL": step.client_url,
        "INITIAL_CLUSTER": ",".join(f"{n}={u}" for n, u in step.initial_cluster),
        "CLUSTER_STATE": step.state,
        "TOKEN": step.token,
        "DATA_DIR": step.data_dir,
    })
    return StepResult(changed(out), {"pid": int(out.get("pid", "0"))})


async def stop(ex: ScriptRunner, t: SshTarget, step: EtcdStop) -> StepResult:
    out = await ex.script(t, step, "etcd_stop", {"WIPE": "1" if step.wipe_data else "0", "DATA_DIR": step.data_dir,
                                                 "DEADLINE_S": "10"})
    return StepResult(changed(out))


async def health(ex: ScriptRunner, t: SshTarget, step: EtcdHealth) -> StepResult:
    out = await ex.script(t, step, "etcd_health",
                          {"ENDPOINTS": ",".join(step.endpoints), "WAIT_S": str(int(step.wait_s + 0.999))},
                          _tls_env(step), timeout=step.wait_s + 30)
    per: dict[str, bool] = {}
    try:
        for e in json.loads(out.get("health") or "[]"):
            per[str(e.get("endpoint"))] = bool(e.get("health"))
    except (ValueError, AttributeError):
        pass
    return StepResult(False, {"healthy": out.get("healthy") == "true", "endpoints": per})


async def member_list(ex: ScriptRunner, t: SshTarget, step: EtcdMemberList) -> StepResult:
    out = await ex.script(t, step, "etcd_member_list", {"ENDPOINTS": ",".join(step.endpoints)}, _tls_env(step))
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


async def member_remove(ex: ScriptRunner, t: SshTarget, step: EtcdMemberRemove) -> StepResult:
    out = await ex.script(t, step, "etcd_member_remove",
                          {"ENDPOINTS": ",".join(step.endpoints), "MEMBER_NAME": step.name,
                           "DEADLINE_S": str(int(step.deadline_s)), "PEER_URL": step.peer_url},
                          _tls_env(step), timeout=step.deadline_s + 30)
    return StepResult(changed(out), {"id": out.get("id", "")})


async def member_add(ex: ScriptRunner, t: SshTarget, step: EtcdMemberAdd) -> StepResult:
    out = await ex.script(t, step, "etcd_member_add",
                          {"ENDPOINTS": ",".join(step.endpoints), "MEMBER_NAME": step.name,
                           "PEER_URL": step.peer_url, "DEADLINE_S": str(int(step.deadline_s)),
                           "LEARNER": "1" if step.learner else "0"},
                          _tls_env(step), timeout=step.deadline_s + 30)
    ic = out.get("initial_cluster", "")
    pairs = [tuple(p.split("=", 1)) for p in ic.split(",") if "=" in p]
    return StepResult(changed(out), {"initial_cluster": ic, "members": pairs})


async def member_promote(ex: ScriptRunner, t: SshTarget, step: EtcdMemberPromote) -> StepResult:
    out = await ex.script(t, step, "etcd_member_promote",
                          {"ENDPOINTS": ",".join(step.endpoints), "MEMBER_NAME": step.name,
                           "DEADLINE_S": str(int(step.deadline_s))},
                          _tls_env(step), timeout=step.deadline_s + 30)
    return StepResult(changed(out), {"id": out.get("id", "")})


HANDLERS: dict[type, Handler] = {
    EtcdStart: start,
    EtcdStop: stop,
    EtcdHealth: health,
    EtcdMemberList: member_list,
    EtcdMemberRemove: member_remove,
    EtcdMemberAdd: member_add,
    EtcdMemberPromote: member_promote,
}
