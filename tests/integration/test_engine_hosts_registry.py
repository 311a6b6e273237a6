"""Seed 003's private-registry VNF through the REAL engine, the private-registry driver and SSH
(password login, as the seed's request gives) against a test host backing the simulated server
(engine_site.py). The VM image's container runtime is podman behind a `docker` command
(test_private_registry.DOCKER); the registry image is Debian's docker-registry binary as an OCI
archive in the package (registry_image.py), loaded and run for real.

Flow: instantiate (image copied over SFTP, loaded, container started, GET /v2/ answers); an image
pushed with skopeo; heal of the VNFC: the cloud rebuilds the VM (every process gone, new host key,
empty disk, its network namespace cleaned), the driver loads and starts the registry again on the
new VM, which starts empty (no data volume: the progress says so), and serves pushes again; the
SSH password never shows in the operation's events or error."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.integration.conftest import require
from tests.integration.engine_hosts import HostPool
from tests.integration.engine_site import Site, open_site
from tests.integration.harness import Testbed, TestHost
from tests.integration.registry_image import build_registry_archive
from tests.integration.test_private_registry import DOCKER
from tests.integration.test_registry import build_oci_image
from tests.unit.mgmt.registry_pkg import registry_csar
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.resources import Vnfc

pytestmark = pytest.mark.integration
R = "private_registry_installation_param"


async def provision(site: Site, pool: HostPool, h: TestHost, vnfc: Vnfc) -> None:
    """The VM image's container runtime: podman as docker."""
    await site.ssh.run_script(h.target(), "install -m 0755 /dev/stdin /usr/local/sbin/docker <<'EOF'\n" + DOCKER
                              + "EOF\n", check=True)


@pytest.fixture
async def site(testbed: Testbed, ssh: SshExecutor, tmp_path: Path) -> AsyncIterator[Site]:
    require("podman", "runc", "skopeo", "docker-registry", "curl")
    async with open_site(testbed, ssh, tmp_path, provision) as s:
        yield s


def catalog(url: str) -> list[str]:
    with urllib.request.urlopen(f"{url}/v2/_catalog", timeout=10) as r:  # noqa: S310 - a test host
        repos: list[str] = json.loads(r.read())["repositories"]
        return repos


def push(image: str, host: str) -> None:
    res = subprocess.run(["skopeo", "--insecure-policy", "copy", "--dest-tls-verify=false", image,
                          f"docker://{host}:5000/demo/tiny:1.0"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


async def test_engine_private_registry_vnf_instantiate_push_heal_rebuilt(site: Site, tmp_path: Path) -> None:
    app, pw = site.app, site.pool.bed.root_password
    archive = build_registry_archive(tmp_path / "private_registry.tar")
    site.create(registry_csar(image=archive.read_bytes()))
    body = {"flavourId": "simple", "additionalParams": {R: {
        "ssh_cp_name": "CP1", "ssh_username": "root", "ssh_password": pw,
        "image_path": "Files/images/private_registry.tar", "port_no": 5000}}}

    # ---- instantiate: loaded and started on the VM over SSH, answering at the VNFC's address
    occ = await site.done(app.instances.instantiate(site.inst_id, body))
    (vnfc,) = site.vnfcs()
    host = site.pool.host_of(vnfc.id)
    url = f"http://{host.address}:5000"
    assert catalog(url) == []
    assert any(f"answers at {url}/v2/" in e["message"] for e in occ.events), occ.events
    image = build_oci_image(tmp_path / "img")
    push(image, host.address)
    assert catalog(url) == ["demo/tiny"]

    # ---- heal: a rebuilt VM (new host key, empty disk) gets the registry again, empty
    old_key = host.host_key
    occ = await site.done(app.instances.heal(site.inst_id, {"vnfcInstanceId": [vnfc.id]}))
    assert site.pool.by_vnfc[vnfc.id].rebuilt == 1 and host.host_key != old_key
    assert site.state()["host_keys"][vnfc.id] == host.host_key
    msgs = [e["message"] for e in occ.events]
    assert any(f"rebuilt at {url}: the registry starts empty" in m for m in msgs), msgs
    assert catalog(url) == []
    push(image, host.address)
    assert catalog(url) == ["demo/tiny"]
    text = json.dumps([[e["message"] for e in occ.events], occ.error, site.state()])
    assert pw not in text
