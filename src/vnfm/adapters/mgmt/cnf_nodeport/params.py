"""`additionalParams.lcm-kubernetes-external-lb` as seed 002 writes it (snake_case, or the camelCase
Tacker reports back): `external_lb_param.ssh_ip` / `ssh_username` / `ssh_password` (or
`ssh_private_key`). `script_path` names the reference's shell script: it must be a file of the
package (as the reference requires), but nothing of the package is run."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from vnfm.domain.errors import BadRequest

KEY = "lcm-kubernetes-external-lb"


@dataclass(frozen=True)
class ExternalLb:
    ssh_ip: str
    username: str
    password: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)
    script_path: str | None = None


def _get(d: dict[str, Any], snake: str) -> Any:
    camel = "".join(w.capitalize() if i else w for i, w in enumerate(snake.split("_")))
    return d.get(snake, d.get(camel))


def parse(params: dict[str, Any]) -> ExternalLb | None:
    """The external LB of the request, None when the request names none; BadRequest naming the key."""
    root = params.get(KEY)
    if root is None:
        return None
    if not isinstance(root, dict):
        raise BadRequest(f"additionalParams.{KEY} must be an object")
    script = _get(root, "script_path")
    if script is not None and not (isinstance(script, str) and script):
        raise BadRequest(f"additionalParams.{KEY}.script_path must be a file path in the package")
    lb = _get(root, "external_lb_param")
    path = f"additionalParams.{KEY}.external_lb_param"
    if not isinstance(lb, dict):
        raise BadRequest(f"{path} is required (ssh_ip, ssh_username, ssh_password)")
    ip, user = _get(lb, "ssh_ip"), _get(lb, "ssh_username")
    pw, key = _get(lb, "ssh_password"), _get(lb, "ssh_private_key")
    try:
        ipaddress.ip_address(str(ip))
    except ValueError:
        raise BadRequest(f"{path}.ssh_ip must be an IP address") from None
    if not isinstance(user, str) or not user:
        raise BadRequest(f"{path}.ssh_username is required")
    if not (isinstance(pw, str) and pw) and not (isinstance(key, str) and key):
        raise BadRequest(f"{path}: ssh_password or ssh_private_key is required")
    return ExternalLb(str(ip), user, pw if isinstance(pw, str) and pw else None,
                      key if isinstance(key, str) and key else None, script)
