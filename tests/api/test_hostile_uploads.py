"""Hostile CSARs over HTTP: each gets a 4xx ProblemDetails naming the problem, the package stays
CREATED (nothing stored), and the same package can then be uploaded correctly."""

from __future__ import annotations

import io
import stat
import warnings
import zipfile

import pytest

from .conftest import Api, ApiFactory, csar_bytes
from .test_packages import PKGS, assert_problem

SIMPLE_DF = "Definitions/sample_kubernetes_df_simple.yaml"
SCRIPT = "Scripts/install_k8s_cluster.sh"

YAML_BOMB = (
    '\nlol0: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"lol{i}: &{chr(ord('a') + i)} [{','.join(['*' + chr(ord('a') + i - 1)] * 9)}]\n" for i in range(1, 9)
    )
)


def example_files() -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(csar_bytes())) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}


def rezip(files: dict[str, bytes], extra: list[tuple[zipfile.ZipInfo, bytes]] = ()) -> bytes:  # type: ignore[assignment]
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, content in files.items():
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                zf.writestr(info, content)
            for info, content in extra:
                zf.writestr(info, content)
    return buf.getvalue()


def zip_slip() -> bytes:
    files = example_files()
    files["../../evil.sh"] = b"#!/bin/sh\necho pwned\n"
    return rezip(files)


def absolute_path() -> bytes:
    files = example_files()
    files["/etc/cron.d/evil"] = b"* * * * * root true\n"
    return rezip(files)


def symlink() -> bytes:
    info = zipfile.ZipInfo("Scripts/link", date_time=(1980, 1, 1, 0, 0, 0))
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return rezip(example_files(), [(info, b"/etc/passwd")])


def bad_hash() -> bytes:
    files = example_files()
    files[SCRIPT] = b"#!/bin/sh\nrm -rf /\n"
    return rezip(files)


def yaml_bomb() -> bytes:
    files = example_files()
    files[SIMPLE_DF] = files[SIMPLE_DF] + YAML_BOMB.encode()
    return rezip(files)


def zip_bomb() -> bytes:
    files = example_files()
    files["Files/bomb.bin"] = bytes(8 * 1024 * 1024)
    return rezip(files)


def no_tosca_meta() -> bytes:
    files = example_files()
    del files["TOSCA-Metadata/TOSCA.meta"]
    return rezip(files)


def missing_entry_definitions() -> bytes:
    files = example_files()
    del files["Definitions/sample_kubernetes_top.vnfd.yaml"]
    return rezip(files)


CASES = [
    ("not-a-zip", lambda: b"this is plainly not a zip archive", ["zip"]),
    ("zip-slip", zip_slip, ["zip slip", "evil.sh"]),
    ("absolute-path", absolute_path, ["zip slip"]),
    ("symlink", symlink, ["Scripts/link", "symbolic link"]),
    ("bad-hash", bad_hash, ["hash", SCRIPT]),
    ("yaml-bomb", yaml_bomb, [SIMPLE_DF, "YAML"]),
    ("zip-bomb", zip_bomb, ["Files/bomb.bin", "expands"]),
    ("no-tosca-meta", no_tosca_meta, ["TOSCA.meta"]),
    ("missing-entry-definitions", missing_entry_definitions, ["Entry-Definitions"]),
]


@pytest.mark.parametrize(("payload", "words"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
async def test_hostile_upload_is_rejected_and_package_recovers(api: Api, payload: object, words: list[str]) -> None:
    assert callable(payload)
    pkg_id = await api.create_package()
    r = await api.upload(pkg_id, payload())
    assert 400 <= r.status_code < 500, r.text
    assert_problem(r, r.status_code, *words)

    info = (await api.c.get(f"{PKGS}/{pkg_id}")).json()
    assert info["onboardingState"] == "CREATED"
    assert info["operationalState"] == "DISABLED"
    assert "vnfdId" not in info
    assert_problem(await api.c.get(f"{PKGS}/{pkg_id}/package_content"), 409)
    # Nothing was extracted anywhere outside the package cache.
    assert not (api.core.settings.data_dir.parent / "evil.sh").exists()

    # The same package then takes the good CSAR.
    r = await api.upload(pkg_id)
    assert r.status_code == 202, r.text
    info = (await api.c.get(f"{PKGS}/{pkg_id}")).json()
    assert info["onboardingState"] == "ONBOARDED"
    assert "onboardingFailureDetails" not in info


async def test_hostile_upload_does_not_touch_an_onboarded_package(api: Api) -> None:
    good_id, vnfd_id = await api.onboard()
    before = (await api.c.get(f"{PKGS}/{good_id}", params={"all_fields": ""})).json()
    other = await api.create_package()
    assert_problem(await api.upload(other, bad_hash()), 422, "hash")
    # The same vnfdId cannot be onboarded twice either.
    assert_problem(await api.upload(other), 409, vnfd_id)
    after = (await api.c.get(f"{PKGS}/{good_id}", params={"all_fields": ""})).json()
    assert before == after
    r = await api.c.get(f"{PKGS}/{good_id}/package_content")
    assert r.content == csar_bytes()


async def test_empty_upload_is_400(api: Api) -> None:
    pkg_id = await api.create_package()
    assert_problem(await api.upload(pkg_id, b""), 400, "empty")


async def test_oversized_upload_is_413(api_factory: ApiFactory) -> None:
    api = await api_factory(max_package_size=10_000)
    pkg_id = await api.create_package()
    assert len(csar_bytes()) > 10_000
    assert_problem(await api.upload(pkg_id), 413, "limit")
    assert (await api.c.get(f"{PKGS}/{pkg_id}")).json()["onboardingState"] == "CREATED"
