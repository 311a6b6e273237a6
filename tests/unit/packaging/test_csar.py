from __future__ import annotations

import hashlib
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from vnfm.domain.errors import NotFound, PayloadTooLarge, UnprocessableEntity
from vnfm.examples import example_csar, example_package_dir
from vnfm.packaging.csar import (
    TOSCA_META,
    CsarLimits,
    ExtractedPackage,
    build_csar,
    extract_to,
    parse_tosca_meta,
    read_csar,
)

from .helpers import TOP, add_entry, edit, example_files, forge_sizes, set_encrypted, zip_files


def test_example_csar_reads_and_verifies() -> None:
    data = example_csar()
    csar = read_csar(data)
    assert csar.entry_definitions == TOP
    assert csar.meta["CSAR-Version"] == "1.1"
    assert csar.meta["TOSCA-Meta-File-Version"] == "1.0"
    paths = {a.path for a in csar.artifacts}
    assert {
        "Scripts/install_k8s_cluster.sh",
        "Scripts/kubernetes_mgmt.py",
        "BaseHOT/simple/base_hot_top.yaml",
        "BaseHOT/ha/nested/base_hot_nested_worker.yaml",
    } <= paths
    assert all(a.algorithm == "SHA-256" for a in csar.artifacts)
    assert csar.checksum == {"algorithm": "SHA-512", "hash": hashlib.sha512(data).hexdigest()}
    assert "UserData/lcm_user_data.py" in csar.files


def test_build_csar_is_deterministic_and_rehashes(tmp_path: Path) -> None:
    assert example_csar() == example_csar()
    # Edit a hashed script in a copy of the source tree: the built package still verifies.
    src = tmp_path / "pkg"
    for f in example_package_dir().rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            dest = src / f.relative_to(example_package_dir())
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(f.read_bytes())
    (src / "Scripts" / "install_k8s_cluster.sh").write_text("#!/bin/sh\necho changed\n")
    csar = read_csar(build_csar(src))
    art = next(a for a in csar.artifacts if a.path == "Scripts/install_k8s_cluster.sh")
    assert art.hash == hashlib.sha256(b"#!/bin/sh\necho changed\n").hexdigest()
    with zipfile.ZipFile(__import__("io").BytesIO(build_csar(src))) as zf:
        names = zf.namelist()
        assert names == sorted(names)
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_not_a_zip() -> None:
    with pytest.raises(UnprocessableEntity, match="not a valid zip"):
        read_csar(b"this is not a zip file at all")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../evil", r"'\.\.' \(zip slip\)"),
        ("Definitions/../../evil", r"'\.\.' \(zip slip\)"),
        ("/etc/evil", r"absolute path \(zip slip\)"),
        ("C:/evil", r"drive letter"),
        ("Scripts\\evil.sh", r"backslash"),
    ],
)
def test_zip_slip_names_are_rejected(name: str, problem: str) -> None:
    files = example_files()
    files[name] = b"x"
    with pytest.raises(UnprocessableEntity, match=problem) as exc:
        read_csar(zip_files(files))
    assert repr(name)[1:-1][:10] in exc.value.detail


def test_symlink_entry_is_rejected() -> None:
    info = zipfile.ZipInfo("Scripts/link", date_time=(1980, 1, 1, 0, 0, 0))
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    data = add_entry(zip_files(example_files()), info, b"/etc/passwd")
    with pytest.raises(UnprocessableEntity, match="'Scripts/link' is a symbolic link"):
        read_csar(data)


def test_encrypted_entry_is_rejected() -> None:
    files = example_files()
    files["Files/secret.txt"] = b"xxxxxxxxxxxx"
    data = set_encrypted(zip_files(files), "Files/secret.txt")
    with pytest.raises(UnprocessableEntity, match="'Files/secret.txt' is encrypted"):
        read_csar(data)


def test_duplicate_names_are_rejected() -> None:
    data = add_entry(zip_files(example_files()), zipfile.ZipInfo(TOP), b"tosca_definitions_version: x\n")
    with pytest.raises(UnprocessableEntity, match="duplicate"):
        read_csar(data)


def test_too_many_entries() -> None:
    with pytest.raises(PayloadTooLarge, match="entries, over the limit of 10"):
        read_csar(zip_files(example_files()), CsarLimits(max_entries=10))


def test_zip_bomb_high_ratio_entry() -> None:
    files = example_files()
    files["Files/bomb.bin"] = bytes(8 * 1024 * 1024)
    with pytest.raises(UnprocessableEntity, match="'Files/bomb.bin' expands more than 100 times"):
        read_csar(zip_files(files))


def test_zip_bomb_lying_header_size() -> None:
    files = example_files()
    files["Files/bomb.bin"] = bytes(4 * 1024 * 1024)
    data = forge_sizes(zip_files(files), "Files/bomb.bin", 100)
    with pytest.raises(UnprocessableEntity, match="'Files/bomb.bin' holds more data than the 100 bytes"):
        read_csar(data)


def test_header_claiming_more_than_the_data() -> None:
    files = example_files()
    files["Files/small.txt"] = b"hello"
    data = forge_sizes(zip_files(files), "Files/small.txt", 50)
    with pytest.raises(UnprocessableEntity, match="'Files/small.txt' decompresses to 5 bytes"):
        read_csar(data)


def test_total_size_limit() -> None:
    files = example_files()
    with pytest.raises(PayloadTooLarge, match="over the limit of 4096 bytes decompressed"):
        read_csar(zip_files(files), CsarLimits(max_total_bytes=4096))


def test_archive_size_limit() -> None:
    with pytest.raises(PayloadTooLarge, match="over the limit of 100 bytes"):
        read_csar(example_csar(), CsarLimits(max_archive_bytes=100))


def test_wrong_hash_names_the_file() -> None:
    files = example_files()
    files["Scripts/install_k8s_cluster.sh"] = b"#!/bin/sh\nrm -rf /\n"
    with pytest.raises(UnprocessableEntity, match="hash mismatch for 'Scripts/install_k8s_cluster.sh'"):
        read_csar(zip_files(files))


def test_missing_tosca_meta() -> None:
    files = example_files()
    del files[TOSCA_META]
    with pytest.raises(UnprocessableEntity, match="no TOSCA-Metadata/TOSCA.meta"):
        read_csar(zip_files(files))


def test_missing_entry_definitions_file() -> None:
    files = example_files()
    del files[TOP]
    with pytest.raises(
        UnprocessableEntity, match=f"Entry-Definitions names '{TOP}', which is not in the package"
    ):
        read_csar(zip_files(files))


def test_missing_entry_definitions_key() -> None:
    files = edit(example_files(), TOSCA_META, "Entry-Definitions: ", "Other: ")
    with pytest.raises(UnprocessableEntity, match="has no Entry-Definitions"):
        read_csar(zip_files(files))


def test_listed_artifact_missing_from_package() -> None:
    files = example_files()
    del files["Scripts/kubernetes_mgmt.py"]
    with pytest.raises(
        UnprocessableEntity, match="'Scripts/kubernetes_mgmt.py', which is not in the package"
    ):
        read_csar(zip_files(files))


def test_tosca_meta_algorithm_spellings_and_sol004_source() -> None:
    body = b"payload"
    text = (
        "TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: x\nEntry-Definitions: a.yaml\n\n"
        f"Source: f1\nAlgorithm: sha256\nHash: {hashlib.sha256(body).hexdigest().upper()}\n\n"
        f"Name: f2\nAlgorithm: SHA-384\nHash: {hashlib.sha384(body).hexdigest()}\n\n"
        f"Name: f3\nAlgorithm: sha_512\nHash: {hashlib.sha512(body).hexdigest()}\n"
    )
    meta, arts = parse_tosca_meta(text.encode())
    assert meta["Created-by"] == "x"
    assert [(a.path, a.algorithm) for a in arts] == [("f1", "SHA-256"), ("f2", "SHA-384"), ("f3", "SHA-512")]
    files = {TOSCA_META: text.encode(), "a.yaml": b"x: 1\n", "f1": body, "f2": body, "f3": body}
    assert len(read_csar(zip_files(files)).artifacts) == 3


def test_unsupported_hash_algorithm() -> None:
    text = b"Entry-Definitions: a.yaml\n\nName: f\nAlgorithm: MD5\nHash: 00\n"
    with pytest.raises(UnprocessableEntity, match="'f' uses unsupported hash algorithm 'MD5'"):
        parse_tosca_meta(text)


def test_tosca_meta_artifact_escaping() -> None:
    text = b"Entry-Definitions: a.yaml\n\nName: ../x\nAlgorithm: SHA-256\nHash: 00\n"
    with pytest.raises(UnprocessableEntity, match="escapes the package"):
        parse_tosca_meta(text)


def test_extract_and_package_files(tmp_path: Path) -> None:
    csar = read_csar(example_csar())
    dest = tmp_path / "x"
    extract_to(csar, dest)
    for p in dest.rglob("*"):
        assert not p.is_symlink()
        assert p.is_dir() or p.is_file()
    pkg = ExtractedPackage(dest)
    assert pkg.listing() == sorted(csar.files)
    assert pkg.read("Scripts/install_k8s_cluster.sh") == csar.files["Scripts/install_k8s_cluster.sh"]
    assert pkg.read("./UserData/k8s_cluster_user_data.py") == csar.files["UserData/k8s_cluster_user_data.py"]
    assert pkg.exists("BaseHOT/simple/base_hot_top.yaml")
    assert not pkg.exists("BaseHOT/none.yaml")
    with pytest.raises(NotFound):
        pkg.read("Scripts/none.sh")
    for bad in ("../x/Scripts/install_k8s_cluster.sh", "/etc/passwd", "Scripts/../../etc"):
        with pytest.raises(UnprocessableEntity):
            pkg.read(bad)
        with pytest.raises(UnprocessableEntity):
            pkg.exists(bad)
    # A symlink planted in the extracted tree is not followed.
    (dest / "Scripts" / "link").symlink_to("/etc/passwd")
    with pytest.raises(UnprocessableEntity, match="symbolic link"):
        pkg.read("Scripts/link")
    assert "Scripts/link" not in pkg.listing()


def test_extract_refuses_existing_files(tmp_path: Path) -> None:
    csar = read_csar(example_csar())
    extract_to(csar, tmp_path)
    with pytest.raises(UnprocessableEntity, match="already exists"):
        extract_to(csar, tmp_path)


def test_overlapping_entries_are_rejected() -> None:
    """Two central-directory records pointing at the same data (non-recursive zip bomb)."""
    files = {TOSCA_META: b"Entry-Definitions: a.yaml\n", "a.yaml": b"x: 1\n", "b.bin": bytes(1000)}
    raw = bytearray(zip_files(files))
    central: dict[bytes, int] = {}
    pos = 0
    while (pos := raw.find(b"PK\x01\x02", pos)) >= 0:
        n = struct.unpack("<H", raw[pos + 28 : pos + 30])[0]
        central[bytes(raw[pos + 46 : pos + 46 + n])] = pos
        pos += 4
    # Point the central record of "b.bin" at the local header of "a.yaml".
    a_local = raw[central[b"a.yaml"] + 42 : central[b"a.yaml"] + 46]
    raw[central[b"b.bin"] + 42 : central[b"b.bin"] + 46] = a_local
    with pytest.raises(UnprocessableEntity, match="overlaps"):
        read_csar(bytes(raw))


def _meta(*blocks: str) -> bytes:
    return ("TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: x\nEntry-Definitions: a.yaml\n\n"
            + "\n".join(blocks)).encode()


def test_artifact_without_checksum_is_accepted_and_unverified() -> None:
    """Tacker's kubeadm and private-registry samples list their image with Name and Content-Type
    only: such a block is accepted (nothing to verify) and carries no checksum."""
    body = b"image bytes"
    text = _meta("Name: Files/images/ubuntu.img\nContent-Type: application/x-iso9066-image\n",
                 f"Source: f2\nAlgorithm: SHA-256\nHash: {hashlib.sha256(body).hexdigest()}\n")
    files = {TOSCA_META: text, "a.yaml": b"x: 1\n", "Files/images/ubuntu.img": body, "f2": body}
    csar = read_csar(zip_files(files))
    img, f2 = csar.artifacts
    assert (img.path, img.algorithm, img.hash, img.has_checksum) == ("Files/images/ubuntu.img", "", "", False)
    assert img.content_type == "application/x-iso9066-image"
    assert f2.has_checksum
    # An unverified artifact must still be in the package.
    del files["Files/images/ubuntu.img"]
    with pytest.raises(UnprocessableEntity, match="'Files/images/ubuntu.img', which is not in the package"):
        read_csar(zip_files(files))


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("Name: f\nHash: 00\n", "'f' has no Algorithm"),
        ("Name: f\nAlgorithm: SHA-256\n", "'f' has no Hash"),
        ("Name: f\nAlgorithm:\nHash:\n", "'f' has no Algorithm"),
        ("Name: f\nAlgorithm: MD5\nHash: 00\n", "unsupported hash algorithm 'MD5'"),
        ("Name: f\nAlgorithm: SHA-256\nHash: not-hex\n", "not hexadecimal"),
        (f"Name: f\nAlgorithm: SHA-256\nHash: {hashlib.sha256(b'other').hexdigest()}\n", "hash mismatch for 'f'"),
    ],
)
def test_declared_checksums_are_still_enforced(block: str, problem: str) -> None:
    files = {TOSCA_META: _meta(block), "a.yaml": b"x: 1\n", "f": b"payload"}
    with pytest.raises(UnprocessableEntity, match=problem):
        read_csar(zip_files(files))
