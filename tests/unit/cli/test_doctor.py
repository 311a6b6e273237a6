"""`vnfm doctor` against the real server: nothing wrong (exit 0), then a VIM whose Keystone does
not answer (the server's real probe): one line saying so with what to do, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from vnfm.entrypoints.cli.main import cli


def run(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--endpoint", url, *args])


def test_doctor_says_what_is_wrong(server_url: str, tmp_path: Path) -> None:
    res = run(server_url, "doctor")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1].startswith("0 problem(s), ")
    assert "warning  config.secret_key:" in res.stdout and "; do: back it up" in res.stdout
    vim = tmp_path / "vim.json"
    vim.write_text(json.dumps({"name": "gone", "vimType": "openstack", "accessInfo": {
        "authUrl": "http://127.0.0.1:1/v3", "username": "admin", "password": "adm1n-pw", "project": "p"}}))
    assert run(server_url, "vim", "register", str(vim), "--no-probe").exit_code == 0
    res = run(server_url, "doctor")
    assert res.exit_code == 1, res.output
    (line,) = [ln for ln in res.stdout.splitlines() if ln.startswith("PROBLEM")]
    assert line.startswith("PROBLEM  vim gone (") and "; do: check its accessInfo" in line
    assert "adm1n-pw" not in res.output
    report = json.loads(run(server_url, "doctor", "--all", "-o", "json").stdout)
    assert report["problems"] == 1 and {"database", "engine"} <= {f["check"] for f in report["findings"]}
