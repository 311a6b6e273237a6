"""The Kubespray driver's parameters: the shared `k8s_cluster_installation_param` (master_node,
worker_node, proxy, vim_name: adapters/mgmt/cluster/params.py) plus seed 002's `ansible` and
`external_lb_param`.

Extensions, all optional: `ansible.ssh_private_key` (instead of the password), `ansible.mtu` (the
cluster network's MTU: Kubespray's calico_mtu), `ansible.playbook_timeout` (seconds per run),
`external_lb_param.ssh_private_key`.

Scale and heal requests may carry `master_node`, `worker_node`, `ansible` and `external_lb_param`
as whole dicts (seed 002: "you need to set values for all keys"): each replaces the stored one, and
a dict that lacks a required key is refused naming the missing keys.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.domain.errors import BadRequest

KEY = P.KEY
ROOT = P.ROOT
_USER = P._USER
_CP_NAME = P._CP_NAME

# the keys a whole dict of a scale/heal request must have (one of each tuple)
REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    "master_node": (("ssh_cp_name",), ("username",), ("password", "ssh_private_key")),
    "worker_node": (("ssh_cp_name",), ("username",), ("password", "ssh_private_key")),
    "ansible": (("ip_address",), ("username",), ("password", "ssh_private_key"), ("kubespray_root_path",),
                ("transferring_inventory_path",)),
    "external_lb_param": (("ssh_cp_name",), ("ssh_username",), ("ssh_password", "ssh_private_key"),
                          ("script_path",)),
}


@dataclass(frozen=True)
class AnsibleParams:
    ip_address: str
    username: str
    kubespray_root_path: str
    transferring_inventory_path: str
    password: str | None = field(default=None, repr=False)
    ssh_private_key: str | None = field(default=None, repr=False)
    mtu: int | None = None
    playbook_timeout: float = 3600.0


@dataclass(frozen=True)
class ExternalLbParams:
    ssh_cp_name: str
    ssh_username: str
    script_path: str
    ssh_password: str | None = field(default=None, repr=False)
    ssh_private_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class KubesprayParams:
    cluster: P.ClusterParams
    ansible: AnsibleParams
    lb: ExternalLbParams


def _bad(path: str, why: str) -> BadRequest:
    return BadRequest(f"{path}: {why}")


def _secret(d: dict[str, Any], pw_key: str, path: str) -> tuple[str | None, str | None]:
    pw = d.get(pw_key)
    if pw is not None and (not isinstance(pw, str) or not pw or "\n" in pw):
        raise _bad(f"{path}.{pw_key}", "must be a non-empty single-line string")  # never echo it
    key = d.get("ssh_private_key")
    if key is not None and (not isinstance(key, str) or "PRIVATE KEY" not in key):
        raise _bad(f"{path}.ssh_private_key", "must be an OpenSSH or PEM private key text")
    if pw is None and key is None:
        raise _bad(path, f"give '{pw_key}' or 'ssh_private_key' for SSH access")
    return pw, key


def _ansible(root: dict[str, Any]) -> AnsibleParams:
    path = f"{ROOT}.ansible"
    d = root.get("ansible")
    if not isinstance(d, dict):
        raise _bad(path, "is required (an object: ip_address, username, password, kubespray_root_path, "
                         "transferring_inventory_path)")
    ip = P._req(d, "ip_address", path)
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        raise _bad(f"{path}.ip_address", f"{ip!r} is not an IP address") from None
    user = P._req(d, "username", path)
    if not _USER.match(user):
        raise _bad(f"{path}.username", f"{user!r} is not a valid login name")
    pw, key = _secret(d, "password", path)
    root_path = P._abs_dir(d, "kubespray_root_path", path)
    inv = P._abs_dir(d, "transferring_inventory_path", path)
    if inv in (root_path, f"{root_path}/inventory", f"{root_path}/inventory/sample") \
            or root_path.startswith(inv + "/"):
        raise _bad(f"{path}.transferring_inventory_path", f"{inv!r} must be a directory of its own for this "
                   "cluster's inventory (e.g. <kubespray_root_path>/inventory/mycluster), not the Kubespray "
                   "tree, its inventory/ or inventory/sample")
    mtu = d.get("mtu")
    if mtu is not None and (isinstance(mtu, bool) or not isinstance(mtu, int) or not 576 <= mtu <= 9216):
        raise _bad(f"{path}.mtu", f"{mtu!r} must be an integer within 576..9216")
    timeout = P._number(d, "playbook_timeout", path, 3600.0)
    return AnsibleParams(ip, user, root_path, inv, pw, key, mtu, timeout)


def _external_lb(root: dict[str, Any]) -> ExternalLbParams:
    path = f"{ROOT}.external_lb_param"
    d = root.get("external_lb_param")
    if not isinstance(d, dict):
        raise _bad(path, "is required (an object: ssh_cp_name, ssh_username, ssh_password, script_path)")
    cp = P._req(d, "ssh_cp_name", path)
    if not _CP_NAME.match(cp):
        raise _bad(f"{path}.ssh_cp_name", f"{cp!r} contains characters not allowed in a VNFD id")
    user = P._req(d, "ssh_username", path)
    if not _USER.match(user):
        raise _bad(f"{path}.ssh_username", f"{user!r} is not a valid login name")
    pw, key = _secret(d, "ssh_password", path)
    script = P._pkg_path(d, "script_path", path, required=True)
    assert script is not None
    return ExternalLbParams(cp, user, script, pw, key)


def parse(additional_params: dict[str, Any] | None) -> KubesprayParams:
    """The cluster parameters plus `ansible` and `external_lb_param`; BadRequest naming the key."""
    cluster = P.parse(additional_params)
    assert isinstance(additional_params, dict)
    root = additional_params[KEY]
    return KubesprayParams(cluster, _ansible(root), _external_lb(root))


def check_whole(extra: dict[str, Any] | None) -> None:
    """A scale/heal request's dicts must be whole: refuse one that lacks a required key."""
    root = (extra or {}).get(KEY)
    if root is None:
        return
    if not isinstance(root, dict):
        raise _bad(ROOT, f"must be an object, got {type(root).__name__}")
    for name, required in REQUIRED.items():
        if name not in root:
            continue
        d = root[name]
        if not isinstance(d, dict):
            raise _bad(f"{ROOT}.{name}", f"must be an object, got {type(d).__name__}")
        missing = [" or ".join(alts) for alts in required if not any(d.get(k) is not None for k in alts)]
        if missing:
            raise _bad(f"{ROOT}.{name}", f"a scale or heal request gives the whole dict (seed 002: every key "
                                         f"set even to change one value); missing: {', '.join(missing)}")


def override(base: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """The stored additionalParams with a scale/heal request's: every dict the request gives inside
    k8s_cluster_installation_param replaces the stored one whole; other top-level keys replace."""
    out = dict(base)
    for k, v in (extra or {}).items():
        if k == KEY and isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out
