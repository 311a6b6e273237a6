"""`openstack vim register / list / show / set / delete` of the stock python-tackerclient against
vnfm's VIM registry (Tacker's /v1.0/vims routes): the commands an operator migrating from Tacker
types, with Tacker's VIM config files; secrets come back masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Cli

pytestmark = pytest.mark.slow

OS_PASSWORD = "vim-0penstack-pw"
K8S_TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6Ik-k8s-token"

# Tacker's doc samples: vim_config.yaml (OpenStack) and a Kubernetes VIM with a bearer token.
OPENSTACK_CONFIG = f"""auth_url: 'http://192.0.2.10/identity'
username: 'nfv_user'
password: '{OS_PASSWORD}'
project_name: 'nfv'
project_domain_name: 'Default'
user_domain_name: 'Default'
cert_verify: 'True'
"""
K8S_CONFIG = f"""auth_url: "https://192.0.2.20:6443"
bearer_token: "{K8S_TOKEN}"
ssl_ca_cert: "-----BEGIN CERTIFICATE-----\\nMIIC5jCCAc6gAwIBAgIBADANBgkqhkiG9w0BAQsFADAV\\n-----END CERTIFICATE-----"
project_name: "default"
type: "kubernetes"
"""


def test_vim_commands_of_the_stock_client(cli: Cli, tmp_path: Path) -> None:
    os_cfg = tmp_path / "vim_config.yaml"
    os_cfg.write_text(OPENSTACK_CONFIG)
    k8s_cfg = tmp_path / "vim_k8s.yaml"
    k8s_cfg.write_text(K8S_CONFIG)

    made = cli.json("vim", "register", "--config-file", str(os_cfg), "--description", "migrated", "openstack-vim")
    os_id = made["id"]
    assert made["type"] == "openstack" and made["name"] == "openstack-vim"
    assert made["auth_cred"]["password"] == "***" and made["auth_cred"]["username"] == "nfv_user"
    assert made["vim_project"] == {"name": "nfv", "project_domain_name": "Default"}
    k8s = cli.json("vim", "register", "--config-file", str(k8s_cfg), "k8s-vim")
    assert k8s["type"] == "kubernetes" and k8s["auth_cred"]["bearer_token"] == "***"

    listed, by_name, by_id = cli.many(("vim", "list"), ("vim", "show", "k8s-vim"), ("vim", "show", os_id))
    types = {r["Name"]: r["Type"] for r in listed}
    assert types["openstack-vim"] == "openstack" and types["k8s-vim"] == "kubernetes"
    assert any(r["Is Default"] for r in listed)  # the built-in simulated cloud
    assert by_name["auth_url"] == "https://192.0.2.20:6443"
    assert by_id["description"] == "migrated" and by_id["status"] == "ACTIVE"
    everything = json.dumps([listed, by_name, by_id, made, k8s])
    assert OS_PASSWORD not in everything and K8S_TOKEN not in everything

    changed = cli.json("vim", "set", "--name", "openstack-vim-2", "--description", "renamed", os_id)
    assert changed["name"] == "openstack-vim-2" and changed["description"] == "renamed"
    # The registry behind it is vnfm's: the native API sees the same VIM, secret kept (not '***').
    stored = cli.http.get(f"/vnfm/v1/vims/{os_id}").json()
    assert stored["name"] == "openstack-vim-2" and stored["vimType"] == "openstack"
    assert stored["accessInfo"]["authUrl"] == "http://192.0.2.10/identity"

    out = cli.run("vim", "delete", "openstack-vim-2", k8s["id"]).stdout
    assert "deleted successfully" in out
    names = {r["Name"] for r in cli.json("vim", "list")}
    assert not {"openstack-vim-2", "k8s-vim"} & names
    failed = cli.run("vim", "show", "no-such-vim", check=False)
    assert failed.returncode != 0 and "no-such-vim" in failed.stderr
