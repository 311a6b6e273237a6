"""Example VNF packages shipped with vnfm (source trees, built into CSARs on demand)."""

from __future__ import annotations

from pathlib import Path

from vnfm.packaging.csar import build_csar

PACKAGES_DIR = Path(__file__).resolve().parent / "packages"


def example_package_dir(name: str = "k8s_cluster") -> Path:
    path = PACKAGES_DIR / name
    if not (path / "TOSCA-Metadata" / "TOSCA.meta").is_file():
        known = ", ".join(sorted(p.name for p in PACKAGES_DIR.iterdir() if p.is_dir()))
        raise ValueError(f"no example package {name!r} (known: {known})")
    return path


def example_csar(name: str = "k8s_cluster") -> bytes:
    """The example package as a CSAR zip (deterministic; TOSCA.meta hashes refreshed)."""
    return build_csar(example_package_dir(name))


EXAMPLE_VNFD_ID = "5f2a9c1e-7b3d-4e8a-9c6f-1d2e3f4a5b6c"
# the other example packages' vnfdIds that example_csar_version replaces
_OWN_VNFD_IDS = {"kubespray": "9d3c7e1a-5b2f-4c8e-a1d7-3e6f0b2c4a51"}


def example_csar_version(version: str, vnfd_id: str, name: str = "k8s_cluster") -> bytes:
    """A copy of the example package as another release of the same product: descriptor and
    software version `version`, vnfdId `vnfd_id` (a change_vnfpkg target, e.g. '1.1')."""
    import re
    import shutil
    import tempfile

    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version) or not re.fullmatch(r"[0-9a-f-]{36}", vnfd_id):
        raise ValueError("version must be dotted numbers and vnfd_id a UUID")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / name
        shutil.copytree(example_package_dir(name), tree)
        for f in (tree / "Definitions").glob("*.yaml"):
            text = f.read_text().replace(_OWN_VNFD_IDS.get(name, EXAMPLE_VNFD_ID), vnfd_id)
            if f.name.endswith(("_top.vnfd.yaml", "_types.yaml")):
                text = text.replace("'1.0'", f"'{version}'")
            f.write_text(text)
        return build_csar(tree)
