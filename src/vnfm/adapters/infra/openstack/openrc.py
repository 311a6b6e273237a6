"""An OpenStack openrc file (OS_* variables) as a VIM registration's accessInfo.

Only plain `KEY=VALUE` / `export KEY=VALUE` lines are read (quotes removed); the file is never
executed. Used by `vnfm demo --vim openstack --openrc PATH` and the integration tests.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any


def read_openrc(path: Path) -> dict[str, str]:
    env: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].strip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            continue
        value = value.strip()
        try:
            parts = shlex.split(value) if value else [""]
        except ValueError:
            parts = [value]
        env[key] = parts[0] if len(parts) == 1 else value
    return env


def access_info(env: dict[str, str]) -> dict[str, Any]:
    """accessInfo for `POST /vnfm/v1/vims` (vimType openstack) from OS_* variables."""
    if not env.get("OS_AUTH_URL"):
        raise ValueError("the openrc file has no OS_AUTH_URL")
    info: dict[str, Any] = {"authUrl": env["OS_AUTH_URL"]}
    if env.get("OS_APPLICATION_CREDENTIAL_ID"):
        info["applicationCredentialId"] = env["OS_APPLICATION_CREDENTIAL_ID"]
        info["applicationCredentialSecret"] = env.get("OS_APPLICATION_CREDENTIAL_SECRET", "")
    else:
        if not env.get("OS_USERNAME") or not env.get("OS_PASSWORD"):
            raise ValueError("the openrc file has neither OS_USERNAME/OS_PASSWORD nor an application credential")
        info["username"] = env["OS_USERNAME"]
        info["password"] = env["OS_PASSWORD"]
        if env.get("OS_PROJECT_ID"):
            info["projectId"] = env["OS_PROJECT_ID"]
        else:
            info["project"] = env.get("OS_PROJECT_NAME") or env.get("OS_TENANT_NAME") or "admin"
            info["projectDomain"] = env.get("OS_PROJECT_DOMAIN_NAME") or "Default"
        info["userDomain"] = env.get("OS_USER_DOMAIN_NAME") or "Default"
    info["region"] = env.get("OS_REGION_NAME") or "RegionOne"
    if env.get("OS_CACERT"):
        info["cacert"] = env["OS_CACERT"]
    if env.get("OS_INTERFACE"):
        info["interface"] = env["OS_INTERFACE"]
    return info
