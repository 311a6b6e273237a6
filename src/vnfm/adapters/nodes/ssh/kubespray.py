"""Kubespray steps over SSH: the cluster's inventory on the operator's Ansible server (hosts.yaml
rendered and edited as YAML here, written whole by a script that checks whose inventory it is),
playbook runs there (ansible-playbook with the run's key in an ssh-agent and the nodes' pinned host
keys), and the node side (the run key's line in authorized_keys, the admin kubeconfig carried to
the external load balancer).

Secrets (the run key, become passwords, proxy URLs, the kubeconfig) travel as exported variables
of the script (`secrets`), never in a file on the Ansible server or in argv; the inventory refers
to them with env lookups that ansible-playbook resolves in its own process.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import yaml

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.kubespray import (
    OWNER_FILE,
    AuthorizedKey,
    InstallKubeconfig,
    KubesprayCheckInventory,
    KubesprayInventory,
    KubesprayPlaybook,
    KubesprayRemoveHost,
    KubesprayRemoveInventory,
    ReadKubeconfig,
    env_lookup,
)
from vnfm.nodesteps.kubespray_tree import layout_lines

HOSTS_FILE = "hosts.yaml"
KNOWN_HOSTS = "known_hosts"
VARS_FILE = "vnfm-vars.yml"
HEADER = "# managed by vnfm (Kubespray driver): rewritten whole on every change\n"


# ============================================================================= rendering (pure)
def render_hosts(step: KubesprayInventory) -> str:
    """hosts.yaml: every host with its addresses and login, the groups Kubespray targets
    (k8s_cluster as the parent of kube_control_plane, kube_node and calico_rr)."""
    hosts: dict[str, dict[str, str]] = {}
    for h in step.hosts:
        entry = {"ansible_host": h.ansible_host, "ip": h.ip, "access_ip": h.ip, "ansible_user": h.user}
        if h.become_password_env:
            entry["ansible_become_password"] = env_lookup(h.become_password_env)
        hosts[h.name] = entry
    groups = step.groups()
    children: dict[str, object] = {g: {"hosts": {n: None for n in groups[g]}}
                                   for g in ("kube_control_plane", "etcd", "kube_node", "calico_rr")}
    children["k8s_cluster"] = {"children": {"kube_control_plane": None, "kube_node": None, "calico_rr": None}}
    doc = {"all": {"hosts": hosts, "children": children}}
    return HEADER + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def render_vars(step: KubesprayInventory) -> str:
    """The cluster's variables, given to every run with -e @vnfm-vars.yml (extra variables win
    over the sample's group_vars); secrets only as env lookups."""
    return HEADER + yaml.safe_dump(step.variables(), sort_keys=False, default_flow_style=False)


def render_known_hosts(entries: Mapping[str, str] | tuple[tuple[str, str], ...]) -> str:
    items = entries.items() if isinstance(entries, Mapping) else entries
    return "".join(f"{addr} {key}\n" for addr, key in items)


def remove_host(hosts_yaml: str, known_hosts: str, node: str, address: str) -> tuple[str, str, bool]:
    """hosts.yaml and known_hosts without `node` (every group; exact names) and `address`."""
    doc = yaml.safe_load(hosts_yaml) or {}
    top = doc.get("all") if isinstance(doc, dict) else None
    if not isinstance(top, dict):
        raise ValueError("hosts.yaml has no 'all' group")
    found = False

    def strip(group: dict[str, Any]) -> None:
        nonlocal found
        hosts = group.get("hosts")
        if isinstance(hosts, dict) and node in hosts:
            del hosts[node]
            found = True
        children = group.get("children")
        for child in (children.values() if isinstance(children, dict) else ()):
            if isinstance(child, dict):
                strip(child)

    strip(top)
    kept = [line for line in known_hosts.splitlines() if line.split(" ", 1)[0] != address or not address]
    new_known = "".join(line + "\n" for line in kept)
    changed_ = found or new_known != known_hosts
    return HEADER + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False), new_known, changed_


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(text: str) -> str:
    return base64.b64decode(text or "").decode()


# ============================================================================= the Ansible server
def _inventory_inputs(mode: str, root: str, inv: str, owner: str) -> dict[str, str]:
    return {"MODE": mode, "ROOT": root, "INV": inv, "OWNER": owner, "OWNER_FILE": OWNER_FILE,
            "HOSTS_FILE": HOSTS_FILE, "KNOWN_HOSTS": KNOWN_HOSTS, "VARS_FILE": VARS_FILE, "LAYOUTS": layout_lines()}


async def check_inventory(ex: ScriptRunner, t: SshTarget, s: KubesprayCheckInventory) -> StepResult:
    out = await ex.script(t, s, "kubespray_inventory", _inventory_inputs("claim" if s.claim else "check",
                                                                         s.kubespray_root, s.inventory_path, s.owner))
    return StepResult(changed(out), {"created": out.get("created") == "true", "layout": out.get("layout", "")})


async def inventory(ex: ScriptRunner, t: SshTarget, s: KubesprayInventory) -> StepResult:
    inputs = _inventory_inputs("write", s.kubespray_root, s.inventory_path, s.owner)
    inputs.update(HOSTS_B64=_b64(render_hosts(s)), KNOWN_B64=_b64(render_known_hosts(s.known_hosts)),
                  VARS_B64=_b64(render_vars(s)))
    out = await ex.script(t, s, "kubespray_inventory", inputs)
    return StepResult(changed(out), {"created": out.get("created") == "true"})


async def remove_inventory_host(ex: ScriptRunner, t: SshTarget, s: KubesprayRemoveHost) -> StepResult:
    cur = await ex.script(t, s, "kubespray_inventory", _inventory_inputs("read", "", s.inventory_path, s.owner))
    if cur.get("exists") != "true":
        raise StepFailed(t.host, s, f"no inventory of this cluster at {s.inventory_path}")
    try:
        hosts, known, dirty = remove_host(_unb64(cur.get("hosts_b64", "")), _unb64(cur.get("known_b64", "")),
                                          s.node, s.address)
    except (ValueError, yaml.YAMLError) as e:
        raise StepFailed(t.host, s, f"{s.inventory_path}/{HOSTS_FILE} is not an inventory: {e}") from None
    if not dirty:
        return StepResult(False)
    inputs = _inventory_inputs("edit", "", s.inventory_path, s.owner)
    inputs.update(HOSTS_B64=_b64(hosts), KNOWN_B64=_b64(known))
    return StepResult(changed(await ex.script(t, s, "kubespray_inventory", inputs)))


async def remove_inventory(ex: ScriptRunner, t: SshTarget, s: KubesprayRemoveInventory) -> StepResult:
    out = await ex.script(t, s, "kubespray_inventory", _inventory_inputs("delete", s.kubespray_root,
                                                                         s.inventory_path, s.owner))
    return StepResult(changed(out))


async def playbook(ex: ScriptRunner, t: SshTarget, s: KubesprayPlaybook) -> StepResult:
    inputs = {"ROOT": s.kubespray_root, "INV": s.inventory_path, "OWNER": s.owner, "OWNER_FILE": OWNER_FILE,
              "HOSTS_FILE": HOSTS_FILE, "KNOWN_HOSTS": KNOWN_HOSTS, "VARS_FILE": VARS_FILE,
              "PLAYBOOK": s.playbook, "LAYOUTS": layout_lines(s.playbook), "LIMIT": ",".join(s.limit),
              "BECOME": "yes" if s.become else "no",
              "EXTRA_VARS": "\n".join(f"{k}={v}" for k, v in s.extra_vars),  # validated plain values
              "TIMEOUT_S": str(int(s.timeout_s))}
    secrets = {"VNFM_RUN_KEY": s.private_key, **dict(s.env)}
    out = await ex.script(t, s, "kubespray_playbook", inputs, secrets=secrets, timeout=s.timeout_s + 60)
    recap: dict[str, dict[str, int]] = {}
    for item in out.get("recap", "").split():
        host, *nums = item.split(":")
        if len(nums) == 4 and all(n.isdigit() for n in nums):
            recap[host] = dict(zip(("ok", "changed", "unreachable", "failed"), map(int, nums), strict=True))
    return StepResult(True, {"seconds": float(out.get("seconds", "0") or 0), "recap": recap,
                             "path": out.get("path", "")})


# ============================================================================= the nodes and the LB
async def authorized_key(ex: ScriptRunner, t: SshTarget, s: AuthorizedKey) -> StepResult:
    out = await ex.script(t, s, "authorized_key", {"MARKER": s.marker, "PUBLIC_KEY": s.public_key})
    return StepResult(changed(out))


async def read_kubeconfig(ex: ScriptRunner, t: SshTarget, s: ReadKubeconfig) -> StepResult:
    out = await ex.script(t, s, "kubeconfig", {"MODE": "read", "KUBECONFIG_PATH": s.path})
    return StepResult(False, {"kubeconfig": _unb64(out.get("kubeconfig_b64", ""))})


def with_server(kubeconfig: str, server: str) -> str:
    """The kubeconfig with every cluster's server set to `server`."""
    doc = yaml.safe_load(kubeconfig)
    if not isinstance(doc, dict) or not isinstance(doc.get("clusters"), list):
        raise ValueError("not a kubeconfig document")
    for c in doc["clusters"]:
        if isinstance(c, dict) and isinstance(c.get("cluster"), dict):
            c["cluster"]["server"] = server
    return yaml.safe_dump(doc, sort_keys=False)


async def install_kubeconfig(ex: ScriptRunner, t: SshTarget, s: InstallKubeconfig) -> StepResult:
    try:
        text = with_server(s.kubeconfig, s.server)
    except (ValueError, yaml.YAMLError):
        raise StepFailed(t.host, s, "the kubeconfig read from the control plane is not a kubeconfig") from None
    out = await ex.script(t, s, "kubeconfig", {"MODE": "install", "KUBECONFIG_PATH": s.path},
                          secrets={"VNFM_KUBECONFIG_B64": _b64(text)})
    return StepResult(changed(out), {"kubectl": out.get("kubectl", "")})


HANDLERS: dict[type, Handler] = {
    KubesprayCheckInventory: check_inventory,
    KubesprayInventory: inventory,
    KubesprayRemoveHost: remove_inventory_host,
    KubesprayRemoveInventory: remove_inventory,
    KubesprayPlaybook: playbook,
    AuthorizedKey: authorized_key,
    ReadKubeconfig: read_kubeconfig,
    InstallKubeconfig: install_kubeconfig,
}
