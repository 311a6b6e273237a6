"""The openrc reader and `vnfm demo --vim openstack` argument checks (no cloud needed: these always run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from vnfm.adapters.infra.openstack.openrc import access_info, read_openrc
from vnfm.entrypoints.cli.demo import run_demo
from vnfm.entrypoints.cli.main import cli


def test_openrc_plain_and_exported(tmp_path: Path) -> None:
    rc = tmp_path / "openrc"
    rc.write_text(
        "# comment\n"
        "export OS_AUTH_URL=http://127.0.0.1:5000/v3\n"
        "OS_USERNAME='admin'\n"
        'export OS_PASSWORD="s3 cret"\n'
        "OS_PROJECT_NAME=demo\n"
        "OS_USER_DOMAIN_NAME=Default\n"
        "echo not a variable\n"
    )
    env = read_openrc(rc)
    assert env["OS_AUTH_URL"] == "http://127.0.0.1:5000/v3"
    assert env["OS_USERNAME"] == "admin" and env["OS_PASSWORD"] == "s3 cret"
    info = access_info(env)
    assert info == {
        "authUrl": "http://127.0.0.1:5000/v3",
        "username": "admin",
        "password": "s3 cret",
        "project": "demo",
        "projectDomain": "Default",
        "userDomain": "Default",
        "region": "RegionOne",
    }


def test_openrc_application_credential_and_errors() -> None:
    info = access_info(
        {"OS_AUTH_URL": "https://k:5000", "OS_APPLICATION_CREDENTIAL_ID": "i", "OS_APPLICATION_CREDENTIAL_SECRET": "s"}
    )
    assert info["applicationCredentialId"] == "i" and "password" not in info
    with pytest.raises(ValueError, match="OS_AUTH_URL"):
        access_info({"OS_USERNAME": "u", "OS_PASSWORD": "p"})
    with pytest.raises(ValueError, match="OS_PASSWORD"):
        access_info({"OS_AUTH_URL": "https://k:5000", "OS_USERNAME": "u"})


def test_demo_openstack_needs_an_openrc(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["demo", "--vim", "openstack"])
    assert res.exit_code == 2 and "--openrc" in res.output
    out: list[str] = []
    assert run_demo(vim="openstack", openrc=None, echo=out.append) is False
    assert "--openrc" in out[-1]
    empty = tmp_path / "openrc"
    empty.write_text("OS_USERNAME=u\n")
    assert run_demo(vim="openstack", openrc=empty, echo=out.append) is False
    assert "OS_AUTH_URL" in out[-1]
    assert run_demo(vim="openstack", openrc=empty, scenario="ha", echo=out.append) is False
    assert "default scenario" in out[-1]
