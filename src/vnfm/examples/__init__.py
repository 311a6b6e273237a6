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
