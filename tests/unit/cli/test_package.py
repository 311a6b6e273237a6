"""`vnfm package ...` against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.cli.cli_fake import FakeVnfm, onboarded, run


def test_package_upload_from_a_url(fake: FakeVnfm, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg_id = json.loads(run(fake, "--json", "package", "create").stdout)["id"]
    assert run(fake, "package", "upload", pkg_id).exit_code == 2  # neither PATH nor --url
    monkeypatch.setenv("VNFM_PACKAGE_PASSWORD", "repo-PW-7")
    res = run(fake, "package", "upload", pkg_id, "--url", "https://repo/k8s.zip", "--user-name", "nfvo")
    assert res.exit_code == 0, res.output
    assert fake.fetched == [{"addressInformation": "https://repo/k8s.zip", "userName": "nfvo",
                             "password": "repo-PW-7"}]
    assert "repo-PW-7" not in res.output and "ONBOARDED" in res.output


def test_lists_follow_the_servers_pages(fake: FakeVnfm) -> None:
    fake.page_size = 2
    ids = [json.loads(run(fake, "--json", "package", "create").stdout)["id"] for _ in range(5)]
    res = run(fake, "--json", "package", "list")
    assert res.exit_code == 0, res.output
    assert [p["id"] for p in json.loads(res.stdout)] == ids
    assert sum(1 for r in fake.requests if r.method == "GET") == 3  # three pages


def test_package_list_table_and_json(fake: FakeVnfm, tmp_path: Path) -> None:
    pkg_id = onboarded(fake, tmp_path)
    res = run(fake, "package", "list")
    assert res.exit_code == 0
    header, rule, row = res.stdout.splitlines()
    assert header.split()[:3] == ["ID", "PRODUCT", "VERSION"]
    assert row.split()[0] == pkg_id
    assert row[header.index("ONBOARDING") :].startswith("ONBOARDED")
    for flag_pos in (["--json", "package", "list"], ["package", "list", "--json"]):
        res = run(fake, *flag_pos)
        assert res.exit_code == 0
        data = json.loads(res.stdout)
        assert data == list(fake.packages.values())


def test_upload_of_a_directory_sends_a_zip(fake: FakeVnfm, tmp_path: Path) -> None:
    d = tmp_path / "pkgdir"
    (d / "TOSCA-Metadata").mkdir(parents=True)
    (d / "TOSCA-Metadata" / "TOSCA.meta").write_text("TOSCA-Meta-File-Version: 1.0\n")
    pkg_id = json.loads(run(fake, "--json", "package", "create").stdout)["id"]
    res = run(fake, "package", "upload", pkg_id, str(d))
    assert res.exit_code == 0, res.output
    assert "ONBOARDED" in res.stdout
    put = [r for r in fake.requests if r.method == "PUT"][0]
    assert put.headers["content-type"] == "application/zip"
    assert put.content.startswith(b"PK")


def test_package_enable_disable_delete_and_vnfd(fake: FakeVnfm, tmp_path: Path) -> None:
    pkg_id = onboarded(fake, tmp_path)
    res = run(fake, "package", "delete", pkg_id)
    assert res.exit_code == 1
    assert f"Error 409 Conflict: package {pkg_id} is ENABLED: disable it first" in res.stderr
    assert run(fake, "package", "disable", pkg_id).stdout.strip() == f"Package {pkg_id} is DISABLED"
    patch = [r for r in fake.requests if r.method == "PATCH"][0]
    assert patch.headers["content-type"] == "application/merge-patch+json"
    assert run(fake, "package", "vnfd", pkg_id).stdout.startswith("tosca_definitions_version")
    assert run(fake, "package", "delete", pkg_id).exit_code == 0
    assert fake.packages == {}


def test_vnfd_of_several_files_needs_a_zip(fake: FakeVnfm, tmp_path: Path) -> None:
    pkg_id = onboarded(fake, tmp_path)
    fake.multi_file_vnfd = True
    res = run(fake, "package", "vnfd", pkg_id)
    assert res.exit_code == 1 and "--zip --file vnfd.zip" in res.output
    out = tmp_path / "vnfd.out"
    res = run(fake, "package", "vnfd", pkg_id, "-o", str(out))  # falls back to the zip
    assert res.exit_code == 0, res.output
    assert out.read_bytes().startswith(b"PK")
    accepts = [r.headers["accept"] for r in fake.requests if r.url.path.endswith("/vnfd")]
    assert accepts == ["text/plain", "text/plain", "application/zip"]
