"""An OpenStack openrc file (OS_* variables) as a VIM registration's accessInfo.

Only plain `KEY=VALUE` / `export KEY=VALUE` lines are read (quotes removed); the file is never
executed. Used by `vnfm demo --vim openstack --openrc PATH` and the integration tests.
"""

from __future__ import annotations

import os
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


# clouds.yaml keys (openstacksdk's names, under `auth` or at the cloud's top level) -> OS_* variables
_CLOUD_KEYS = {
    "auth_url": "OS_AUTH_URL", "username": "OS_USERNAME", "password": "OS_PASSWORD",
    "project_name": "OS_PROJECT_NAME", "project_id": "OS_PROJECT_ID", "tenant_name": "OS_TENANT_NAME",
    "user_domain_name": "OS_USER_DOMAIN_NAME", "project_domain_name": "OS_PROJECT_DOMAIN_NAME",
    "application_credential_id": "OS_APPLICATION_CREDENTIAL_ID",
    "application_credential_secret": "OS_APPLICATION_CREDENTIAL_SECRET",
    "region_name": "OS_REGION_NAME", "cacert": "OS_CACERT", "interface": "OS_INTERFACE",
}


def read_clouds_yaml(cloud: str) -> dict[str, str]:
    """The OS_* variables of cloud `cloud` of clouds.yaml (and secure.yaml), found where openstacksdk
    looks (OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack, /etc/openstack); environment variables
    other than those file locations are not read. ValueError when there is no such cloud."""
    from openstack import exceptions
    from openstack.config import loader

    files = list(loader.CONFIG_FILES)
    override = os.environ.get("OS_CLIENT_CONFIG_FILE")  # not read by the SDK when envvars are off
    if override:
        files.insert(0, override)
    try:
        region = loader.OpenStackConfig(config_files=files, load_envvars=False).get_one(cloud=cloud)
    except exceptions.ConfigException as exc:
        raise ValueError(f"clouds.yaml: {exc}") from None
    config: dict[str, Any] = dict(region.config)
    values = {**config, **dict(config.get("auth") or {})}
    return {env: str(values[key]) for key, env in _CLOUD_KEYS.items() if values.get(key) not in (None, "")}
