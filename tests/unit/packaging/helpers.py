"""Helpers to craft (hostile) packages for the packaging tests."""

from __future__ import annotations

import io
import stat
import struct
import warnings
import zipfile
from functools import cache

from vnfm.domain.vnfd import Vnfd
from vnfm.examples import example_csar
from vnfm.packaging.csar import TOSCA_META, read_csar
from vnfm.packaging.tosca import parse_vnfd

SIMPLE_DF = "Definitions/sample_kubernetes_df_simple.yaml"
TOP = "Definitions/sample_kubernetes_top.vnfd.yaml"


@cache
def _example_bytes() -> bytes:
    return example_csar()


SINGLE = "Definitions/vnfd.yaml"
SINGLE_VNFD = """
tosca_definitions_version: tosca_simple_yaml_1_2
imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
node_types:
  acme.Vnf:
    derived_from: tosca.nodes.nfv.VNF
  acme.Server:
    derived_from: tosca.nodes.nfv.Vdu.Compute
topology_template:
  node_templates:
    VNF:
      type: acme.Vnf
      properties:
        descriptor_id: d-1
        descriptor_version: '2.0'
        provider: Acme
        product_name: One File
        software_version: 3.1
        flavour_id: only
      interfaces:
        Vnflcm:
          instantiate_start: []
          instantiate_end: noop-driver
          heal_end:
            implementation: ../Scripts/driver.py
      artifacts:
        noop-driver:
          type: tosca.artifacts.Implementation.Python
          file: ../Scripts/driver.py
    VDU1:
      type: acme.Server
      properties:
        name: vdu-one
        vdu_profile: {min_number_of_instances: 1, max_number_of_instances: 3}
      capabilities:
        virtual_compute:
          properties:
            virtual_memory: {virtual_mem_size: 512 MB}
            virtual_cpu: {num_virtual_cpu: 1}
      requirements:
        - virtual_storage: VOL1
    VOL1:
      type: tosca.nodes.nfv.Vdu.VirtualBlockStorage
      properties:
        virtual_block_storage_data: {size_of_storage: 512 MiB}
    CP1:
      type: tosca.nodes.nfv.VduCp
      properties: {layer_protocols: [ipv4], order: 1}
      requirements:
        - virtual_binding: VDU1
        - virtual_link: VL1
    VL1:
      type: tosca.nodes.nfv.VnfVirtualLink
      properties:
        connectivity_type: {layer_protocols: [ipv4]}
        vl_profile:
          virtual_link_protocol_data:
            - layer_protocol: ipv4
              l3_protocol_data: {ip_version: ipv4, cidr: 10.0.0.0/24}
  policies:
    - aspects:
        type: tosca.policies.nfv.ScalingAspects
        properties:
          aspects:
            vdu1_aspect: {name: a, max_scale_level: 2, step_deltas: [d1]}
    - deltas:
        type: tosca.policies.nfv.VduScalingAspectDeltas
        properties:
          aspect: vdu1_aspect
          deltas: {d1: {number_of_instances: 1}}
        targets: [VDU1]
"""


def single_files(vnfd: str = SINGLE_VNFD) -> dict[str, bytes]:
    """A single-file package (the layout (b) of the parser): Definitions/vnfd.yaml + a script."""
    meta = f"TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nEntry-Definitions: {SINGLE}\n"
    return {TOSCA_META: meta.encode(), SINGLE: vnfd.encode(), "Scripts/driver.py": b"# never run\n"}


def example_files() -> dict[str, bytes]:
    """The example package's files (a fresh, mutable copy)."""
    return dict(read_csar(_example_bytes()).files)


def parse_files(files: dict[str, bytes]) -> Vnfd:
    """The VNFD of a package made of `files`."""
    return parse_vnfd(read_csar(zip_files(files)))


def zip_files(files: dict[str, bytes], *, mode: int = 0o644) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names on purpose
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, content in files.items():
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (stat.S_IFREG | mode) << 16
                zf.writestr(info, content)
    return buf.getvalue()


def add_entry(data: bytes, info: zipfile.ZipInfo, content: bytes) -> bytes:
    buf = io.BytesIO(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(buf, "a") as zf:
            zf.writestr(info, content)
    return buf.getvalue()


def edit(files: dict[str, bytes], name: str, old: str, new: str) -> dict[str, bytes]:
    text = files[name].decode()
    assert old in text, f"{old!r} not in {name}"
    files[name] = text.replace(old, new, 1).encode()
    return files


def forge_sizes(data: bytes, name: str, file_size: int) -> bytes:
    """Rewrite the uncompressed size of entry `name` in both its local and central headers."""
    raw = bytearray(data)
    encoded = name.encode()
    patched = 0
    pos = 0
    while True:
        pos = raw.find(b"PK\x03\x04", pos)
        if pos < 0:
            break
        n = struct.unpack("<H", raw[pos + 26 : pos + 28])[0]
        if bytes(raw[pos + 30 : pos + 30 + n]) == encoded:
            raw[pos + 22 : pos + 26] = struct.pack("<I", file_size)
            patched += 1
        pos += 4
    pos = 0
    while True:
        pos = raw.find(b"PK\x01\x02", pos)
        if pos < 0:
            break
        n = struct.unpack("<H", raw[pos + 28 : pos + 30])[0]
        if bytes(raw[pos + 46 : pos + 46 + n]) == encoded:
            raw[pos + 24 : pos + 28] = struct.pack("<I", file_size)
            patched += 1
        pos += 4
    assert patched == 2
    return bytes(raw)


def set_encrypted(data: bytes, name: str) -> bytes:
    """Set the 'encrypted' general-purpose flag of entry `name` (local and central headers)."""
    raw = bytearray(data)
    encoded = name.encode()
    patched = 0
    for sig, flag_at, len_at, name_at in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        pos = 0
        while (pos := raw.find(sig, pos)) >= 0:
            n = struct.unpack("<H", raw[pos + len_at : pos + len_at + 2])[0]
            if bytes(raw[pos + name_at : pos + name_at + n]) == encoded:
                raw[pos + flag_at] |= 0x1
                patched += 1
            pos += 4
    assert patched == 2
    return bytes(raw)
