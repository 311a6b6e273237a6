"""`vnfm vim kubeconfig VIM_ID [--show-token] [-o FILE]` against the real API server."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from vnfm.entrypoints.cli.main import cli

CA = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
TOKEN = "s3cret-bearer-token-value"


def run(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--endpoint", url, *args])


def test_kubeconfig_of_a_kubernetes_vim(server_url: str, tmp_path: Path) -> None:
    body = tmp_path / "vim.json"
    body.write_text(json.dumps({"vimType": "ETSINFV.KUBERNETES.V_1", "name": "edge",
                                "accessInfo": {"authUrl": "https://10.0.0.1:6443", "bearer_token": TOKEN,
                                               "ssl_ca_cert": CA}}))
    res = run(server_url, "--json", "vim", "register", str(body))
    assert res.exit_code == 0, res.output
    vim_id = json.loads(res.stdout)["id"]

    res = run(server_url, "vim", "kubeconfig", vim_id)
    assert res.exit_code == 0, res.output
    assert TOKEN not in res.output and "--show-token" in res.stderr
    doc = yaml.safe_load(res.stdout)
    cluster = doc["clusters"][0]["cluster"]
    assert cluster["server"] == "https://10.0.0.1:6443"
    assert base64.b64decode(cluster["certificate-authority-data"]).decode() == CA
    assert doc["users"][0]["user"] == {} and doc["current-context"] == "edge"

    out = tmp_path / "kubeconfig"
    out.write_text("an older file, readable by all")
    out.chmod(0o644)
    res = run(server_url, "vim", "kubeconfig", vim_id, "--show-token", "--file", str(out))
    assert res.exit_code == 0, res.output
    assert TOKEN not in res.output and "deprecated" not in res.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert yaml.safe_load(out.read_text())["users"][0]["user"]["token"] == TOKEN
    # the former `-o FILE` still writes the file, saying it is deprecated
    out.unlink()
    res = run(server_url, "vim", "kubeconfig", vim_id, "-o", str(out))
    assert res.exit_code == 0, res.output
    assert "-o/--output FILE is deprecated here: use --file FILE" in res.stderr and out.exists()
    res = run(server_url, "vim", "kubeconfig", vim_id, "-o", str(out), "--file", str(tmp_path / "other"))
    assert res.exit_code == 2 and "give --file FILE only" in res.stderr

    default = json.loads(run(server_url, "--json", "vim", "list").stdout)[0]["id"]
    res = run(server_url, "vim", "kubeconfig", default)
    assert res.exit_code == 1 and "not a Kubernetes" in res.stderr


def test_kubeconfig_of_a_vim_registered_with_camel_case_keys(server_url: str, tmp_path: Path) -> None:
    """`bearerToken` / `sslCaCert` (as the CNF driver also reads them) make the same kubeconfig."""
    body = tmp_path / "vim.json"
    body.write_text(json.dumps({"vimType": "kubernetes", "name": "camel",
                                "accessInfo": {"authUrl": "https://10.0.0.2:6443", "bearerToken": TOKEN,
                                               "sslCaCert": CA}}))
    res = run(server_url, "--json", "vim", "register", str(body))
    assert res.exit_code == 0, res.output
    out = tmp_path / "kubeconfig"
    res = run(server_url, "vim", "kubeconfig", json.loads(res.stdout)["id"], "--show-token", "--file", str(out))
    assert res.exit_code == 0, res.output
    doc = yaml.safe_load(out.read_text())
    assert doc["users"][0]["user"]["token"] == TOKEN
    assert base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"]).decode() == CA
