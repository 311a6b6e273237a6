"""Packages shaped like Tacker's private-registry sample (tests/api/packages/private_registry) with
what the seed's request bodies name: the registry image file, and for TLS a certificate and key;
the `volume` variant gives the VDU a virtual block storage (the registry's data lives there)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from vnfm.packaging.csar_files import build_csar

SAMPLE = Path(__file__).resolve().parents[2] / "api" / "packages" / "private_registry"
IMAGE_PATH = "Files/images/private_registry.tar"
CERT_PATH = "Files/registry/tls.crt"
KEY_PATH = "Files/registry/tls.key"
CERT = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nMIIEfake-key-material\n-----END PRIVATE KEY-----\n"
DF = "Definitions/sample_vnfd_df_simple.yaml"
VOLUME = """
    RegistryVolume:
      type: tosca.nodes.nfv.Vdu.VirtualBlockStorage
      properties:
        virtual_block_storage_data:
          size_of_storage: 10 GB
          rdma_enabled: false
"""


def registry_csar(*, volume: bool = False, image: bytes = b"registry image archive (docker save)\n",
                  cert: str = CERT, key: str = KEY) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pkg"
        shutil.copytree(SAMPLE, root)
        (root / IMAGE_PATH).write_bytes(image)
        (root / CERT_PATH).parent.mkdir(parents=True, exist_ok=True)
        (root / CERT_PATH).write_text(cert)
        (root / KEY_PATH).write_text(key)
        meta = root / "TOSCA-Metadata" / "TOSCA.meta"
        extra = "".join(f"\nName: {p}\nContent-Type: application/octet-stream\nAlgorithm: SHA-256\nHash: {'0' * 64}\n"
                        for p in (IMAGE_PATH, CERT_PATH, KEY_PATH))
        meta.write_text(meta.read_text() + extra)
        if volume:
            df = root / DF
            text = df.read_text()
            text = text.replace("              - size_of_storage: 45 GB\n",
                                "              - size_of_storage: 45 GB\n      requirements:\n"
                                "        - virtual_storage: RegistryVolume\n", 1)
            text = text.replace("\n    CP1:\n", VOLUME + "\n    CP1:\n", 1)
            df.write_text(text)
        return build_csar(root)
