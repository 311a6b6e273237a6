"""The private-registry VNF driver (seed 003) against a test host over real SSH (password login):
its scripts install nothing (the host has a container runtime), copy the package's registry image
over SFTP, `docker load` and `docker run` it for real, and wait for GET /v2/. The runtime is
podman behind a `docker` command (what Debian's podman-docker provides, plus the flags podman
needs inside a test host: cgroupfs, runc, vfs storage, ulimits); the image holds Debian's
docker-registry binary (registry_image.py). skopeo pushes an image, the VNFC is healed (its server
restarted with a new host key, its disk kept) and the image is pulled back from the new registry;
then the package's certificate and key turn it to HTTPS, and the image is pulled with the CA."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import require
from tests.integration.harness import TestHost
from tests.integration.registry_image import build_registry_archive
from tests.integration.test_registry import build_oci_image, make_ca_and_cert
from tests.unit.mgmt.registry_pkg import CERT_PATH, KEY_PATH, registry_csar
from vnfm.adapters.mgmt.private_registry import PrivateRegistryDriver
from vnfm.adapters.nodes.ssh.access import SshAccess
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.resources import CpResource, Vnfc, VnfResources
from vnfm.packaging.csar import read_csar
from vnfm.packaging.csar_files import ExtractedPackage, extract_to
from vnfm.packaging.tosca.vnfd import parse_vnfd
from vnfm.service.ports import LcmContext

pytestmark = pytest.mark.integration
R = "private_registry_installation_param"
DOCKER = """#!/bin/sh
# podman as docker (as podman-docker does), with the flags podman needs inside a test host
set -e
flags="--cgroup-manager=cgroupfs --runtime runc --storage-driver vfs"
if [ "$1" = run ]; then
  shift
  # shellcheck disable=SC2086
  exec podman $flags run --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 "$@"
fi
# shellcheck disable=SC2086
exec podman $flags "$@"
"""


def skopeo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["skopeo", "--insecure-policy", *args], capture_output=True, text=True, timeout=60)


def catalog(url: str) -> list[str]:
    with urllib.request.urlopen(f"{url}/v2/_catalog", timeout=10) as r:  # noqa: S310 - a test host
        repos: list[str] = json.loads(r.read())["repositories"]
        return repos


class Site:
    """One registry VNFC on a test host, and the hook contexts the engine would build."""

    def __init__(self, host: TestHost, pkg_dir: Path, csar: bytes) -> None:
        self.host = host
        extract_to(read_csar(csar), pkg_dir)
        self.package = ExtractedPackage(pkg_dir)
        self.vnfd = parse_vnfd(read_csar(csar))
        self.flavour = self.vnfd.flavours["simple"]
        self.params = {R: {"ssh_cp_name": "CP1", "ssh_username": "root", "ssh_password": host.bed.root_password,
                           "image_path": "Files/images/private_registry.tar", "port_no": 5000}}
        self.instance = VnfInstance(additional_params=self.params)
        self.vnfc = Vnfc("vnfc-1", "PrivateRegistryVDU", "server-1", "registry-0",
                         cps=[CpResource("cp-1", "CP1", "port-1", [host.address])])
        self.state: dict[str, Any] = {}
        self.events: list[str] = []

    def ctx(self, hook: str, operation: str, **kw: Any) -> LcmContext:
        return LcmContext(hook=hook, operation=operation, op_id="op-" + hook, instance=self.instance,
                          request={"additionalParams": self.params} if operation == LcmOperation.INSTANTIATE else {},
                          additional_params=self.params, vnfd=self.vnfd, flavour=self.flavour,
                          package=self.package, resources=VnfResources([self.vnfc]), state=self.state,
                          progress=self.events.append, nodes=SshAccess(timeout=300),
                          params=PrivateRegistryDriver.declared.for_operation(str(operation), self.params, self.params),
                          **kw)


async def test_private_registry_podman_instantiate_push_heal_pull_tls(make_hosts, ssh: SshExecutor,
                                                                 tmp_path: Path) -> None:
    require("podman", "runc", "skopeo", "docker-registry", "curl")
    [host] = make_hosts(1)
    # the test host's container runtime: podman as docker
    await ssh.run_script(host.target(), "install -m 0755 /dev/stdin /usr/local/sbin/docker <<'EOF'\n" + DOCKER
                         + "EOF\n", check=True)
    archive = build_registry_archive(tmp_path / "private_registry.tar")
    ca_pem, cert_pem, key_pem = make_ca_and_cert(host.address)
    site = Site(host, tmp_path / "pkg", registry_csar(image=archive.read_bytes(), cert=cert_pem, key=key_pem))
    driver = PrivateRegistryDriver()
    driver.validate_request(LcmOperation.INSTANTIATE, {"additionalParams": site.params}, site.instance,
                            site.flavour, site.package)

    await driver.handle("instantiate_end", site.ctx("instantiate_end", LcmOperation.INSTANTIATE,
                                                    added=[site.vnfc]))
    url = f"http://{host.address}:5000"
    assert site.state["registries"]["vnfc-1"]["url"] == url
    assert catalog(url) == []
    assert any("loaded from Files/images/private_registry.tar" in e for e in site.events), site.events

    image = build_oci_image(tmp_path / "img")
    r2 = skopeo("copy", "--dest-tls-verify=false", image, f"docker://{host.address}:5000/demo/tiny:1.0")
    assert r2.returncode == 0, r2.stderr
    assert catalog(url) == ["demo/tiny"]

    # a re-run changes nothing (the image is not copied again, the container is kept)
    site.events.clear()
    await driver.handle("instantiate_end", site.ctx("instantiate_end", LcmOperation.INSTANTIATE,
                                                    added=[site.vnfc]))
    assert any("image registry:latest present" in e for e in site.events), site.events

    # heal: the server is rebuilt (every process gone, a new host key), its disk is kept
    host.restart(new_host_key=True)
    # a test host's restart keeps its network namespace: drop what the old container left there
    # (CNI's NAT rules and bridge), which a rebuilt VM would not have
    await ssh.run_script(host.target(), "iptables -t nat -F; iptables -t nat -X; "
                         "for l in cni-podman0 podman0; do ip link del \"$l\" 2>/dev/null || true; done\n",
                         check=True)
    site.events.clear()
    await driver.handle("heal_end", site.ctx("heal_end", LcmOperation.HEAL, healed=[site.vnfc]))
    assert catalog(url) == ["demo/tiny"]
    r3 = skopeo("copy", "--src-tls-verify=false", f"docker://{host.address}:5000/demo/tiny:1.0",
                f"oci:{tmp_path / 'pulled'}:1.0")
    assert r3.returncode == 0, r3.stderr
    assert any("rebuilt at" in e and "1 repositories" in e for e in site.events), site.events
    text = json.dumps([site.events, site.state])
    assert host.bed.root_password not in text

    # TLS from the package's certificate and key: the same data served over HTTPS
    site.params[R].update(cert_path=CERT_PATH, key_path=KEY_PATH)
    await driver.handle("instantiate_end", site.ctx("instantiate_end", LcmOperation.INSTANTIATE,
                                                    added=[site.vnfc]))
    assert site.state["registries"]["vnfc-1"]["url"] == f"https://{host.address}:5000"
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "ca.crt").write_text(ca_pem)
    r4 = skopeo("copy", "--src-cert-dir", str(certs), f"docker://{host.address}:5000/demo/tiny:1.0",
                f"oci:{tmp_path / 'pulled-tls'}:1.0")
    assert r4.returncode == 0, r4.stderr
    with pytest.raises(OSError):  # plain HTTP is no longer served
        catalog(url)
    mode = await ssh.run(host.target(), ["stat", "-c", "%a", "/etc/vnfm/private-registry/tls.key"], check=True)
    assert mode.stdout.strip() == "600"
    assert key_pem not in json.dumps([site.events, site.state])
