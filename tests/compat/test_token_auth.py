"""The stock `openstack` client against a vnfm that requires authentication: an OAuth 2.0 access
token of vnfm's built-in authorization server passed with `--os-auth-type admin_token --os-token`
(sent as X-Auth-Token) works; none or a wrong one is refused."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from vnfm.config import Settings
from vnfm.domain.secret_hash import hash_secret
from vnfm.entrypoints.api.server import ServerHandle, start_in_thread

from .conftest import _openstack

SECRET = "c0mpat-client-s3cret"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    data = tmp_path_factory.mktemp("vnfm-compat-auth")
    client = {"client_id": "nfvo", "secret_hash": hash_secret(SECRET), "roles": ["operator"], "tenant": "t1"}
    handle = start_in_thread(Settings(data_dir=data, port=0, probe_callbacks=False, sim_boot_time=0,
                                      sim_step_time=0, auth_token="", oauth2_clients=[client]))
    try:
        yield handle
    finally:
        handle.stop()


def _openstack_with(url: str, token: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    exe = _openstack()
    if exe is None:
        pytest.skip("python-openstackclient is not installed")
    auth = ["--os-auth-type", "admin_token", "--os-token", token] if token else ["--os-auth-type", "none"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    return subprocess.run([exe, *auth, "--os-endpoint", url, *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=Path(__file__).parent)


def test_openstack_client_with_an_access_token(secured: ServerHandle) -> None:
    r = httpx.post(f"{secured.url}/oauth2/token", data={"grant_type": "client_credentials"},
                   auth=("nfvo", SECRET), trust_env=False)
    assert r.status_code == 200, r.text
    token = r.json()["access_token"]
    ok = _openstack_with(secured.url, token, "vnflcm", "list", "-f", "json")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "[]"
    created = _openstack_with(secured.url, token, "vnf", "package", "create", "-f", "json")
    assert created.returncode == 0, created.stderr
    for bad in (None, token[:-4] + "AAAA"):
        refused = _openstack_with(secured.url, bad, "vnflcm", "list")
        assert refused.returncode != 0 and "a valid access token is required" in refused.stderr
        assert token not in refused.stderr + refused.stdout
