"""Packages shaped like Tacker's kubeadm, private-registry, Kubespray and CNF-NodePort samples
onboard (issue 11: the image listed in TOSCA.meta without Algorithm/Hash was refused)."""

from __future__ import annotations

import io
import zipfile

import pytest

from .conftest import TACKER_SAMPLES, Api, tacker_sample_csar

IMAGE = "Files/images/ubuntu-20.04-server-cloudimg-amd64.img"
EXPECTED = {
    "kubeadm": ({"masterNode", "workerNode"}, {"simple", "complex"}),
    "private_registry": ({"PrivateRegistryVDU"}, {"simple"}),
    "kubespray": ({"externalLB", "masterNode", "workerNode"}, {"simple"}),
    "cnf_nodeport": (set(), {"simple"}),
}


@pytest.mark.parametrize("name", TACKER_SAMPLES)
async def test_tacker_shaped_sample_onboards(api: Api, name: str) -> None:
    pkg_id = await api.create_package()
    r = await api.upload(pkg_id, tacker_sample_csar(name))
    assert r.status_code == 202, r.text
    info = (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()
    assert info["onboardingState"] == "ONBOARDED" and info["operationalState"] == "ENABLED"
    images, flavours = EXPECTED[name]
    assert {i["id"] for i in info.get("softwareImages", [])} == images
    arts = {a["artifactPath"]: a for a in info.get("additionalArtifacts", [])}
    assert IMAGE not in arts  # a software image, not an additional artifact
    assert arts and all(a["checksum"]["algorithm"] == "SHA-256" for a in arts.values())
    vnfd = api.core.packages.vnfd(pkg_id)
    assert set(vnfd.flavours) == flavours
    r = await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}/artifacts/{IMAGE}")
    ships_image = name in ("kubeadm", "private_registry")  # the others name their images only
    assert r.status_code == (200 if ships_image else 404)


async def test_an_unhashed_artifact_other_than_an_image_is_reported_without_checksum(api: Api) -> None:
    """A TOSCA.meta block with Name and Content-Type only, for a file that is not an image."""
    buf = io.BytesIO(tacker_sample_csar("cnf_nodeport"))
    with zipfile.ZipFile(buf) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    files["TOSCA-Metadata/TOSCA.meta"] += b"\nName: Files/kubernetes/extra.yaml\nContent-Type: application/yaml\n"
    files["Files/kubernetes/extra.yaml"] = b"kind: ConfigMap\n"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)
    pkg_id = await api.create_package()
    r = await api.upload(pkg_id, out.getvalue())
    assert r.status_code == 202, r.text
    arts = {a["artifactPath"]: a for a in (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()[
        "additionalArtifacts"]}
    assert "checksum" not in arts["Files/kubernetes/extra.yaml"]
    assert arts["Files/kubernetes/deployment.yaml"]["checksum"]["algorithm"] == "SHA-256"
