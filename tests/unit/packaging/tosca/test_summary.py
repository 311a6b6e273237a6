from __future__ import annotations

import hashlib

from vnfm.examples import example_csar
from vnfm.packaging.csar import read_csar
from vnfm.packaging.tosca import package_summary, parse_vnfd


def test_package_summary() -> None:
    csar = read_csar(example_csar())
    s = package_summary(csar, parse_vnfd(csar))
    assert s["checksum"]["algorithm"] == "SHA-512"
    ids = {i["id"] for i in s["softwareImages"]}
    assert ids == {"masterNode", "workerNode", "storage_server"}
    img = next(i for i in s["softwareImages"] if i["id"] == "masterNode")
    assert img["size"] == 2_000_000_000 and img["diskFormat"] == "QCOW2" and img["version"] == "20.04"
    assert img["checksum"]["algorithm"] == "sha-512"
    arts = {a["artifactPath"]: a for a in s["additionalArtifacts"]}
    mgmt = arts["Scripts/kubernetes_mgmt.py"]
    assert mgmt["checksum"] == {
        "algorithm": "SHA-256",
        "hash": hashlib.sha256(csar.files["Scripts/kubernetes_mgmt.py"]).hexdigest(),
    }
    assert "BaseHOT/simple_pv/base_hot_top.yaml" in arts
