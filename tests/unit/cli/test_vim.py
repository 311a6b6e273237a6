"""`vnfm vim ...` against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.cli.cli_fake import FakeVnfm, run


def test_vim_commands(fake: FakeVnfm, tmp_path: Path) -> None:
    vim = tmp_path / "vim.json"
    vim.write_text(
        json.dumps(
            {
                "name": "os1",
                "vimType": "openstack",
                "interfaceInfo": {"endpoint": "http://keystone:5000/v3"},
                "accessInfo": {"username": "admin", "password": "adm1n-pw"},
            }
        )
    )
    res = run(fake, "vim", "register", str(vim))
    assert res.exit_code == 0 and "adm1n-pw" not in res.stdout
    lines = run(fake, "vim", "list").stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "TYPE", "DEFAULT", "ENDPOINT"]
    assert "http://keystone:5000/v3" in lines[2]
