"""The OpenStack unit tests' builders: the example Kubernetes package, the fake cloud, a driver on it,
contexts, and a package held in a dict."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.unit.openstack.fake_cloud import FakeCloud
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver
from vnfm.domain.model import Vim
from vnfm.domain.vnfd import Vnfd
from vnfm.packaging.csar import ExtractedPackage, build_csar, read_csar
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import InfraContext

K8S = Path(__file__).resolve().parents[3] / "src" / "vnfm" / "examples" / "packages" / "k8s_cluster"
IMAGE = "ubuntu-20.04-server-cloudimg-amd64"
EXT = [
    {
        "id": "evl-1",
        "resourceId": "net-1",
        "extCps": [
            {"cpdId": "masterNode_CP1", "cpConfig": [{"cpProtocolData": [
                {"layerProtocol": "IP_OVER_ETHERNET",
                 "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "fixedAddresses": ["10.0.0.99"]}]}}]}]},
            {"cpdId": "workerNode_CP2", "cpConfig": [{"cpProtocolData": []}]},
        ],
    }
]


@pytest.fixture(scope="module")
def k8s() -> tuple[Vnfd, ExtractedPackage]:
    return parse_vnfd(read_csar(build_csar(K8S))), ExtractedPackage(K8S)


@pytest.fixture
def cloud() -> FakeCloud:
    c = FakeCloud()
    c.add_image(IMAGE)
    return c


@pytest.fixture
def driver(cloud: FakeCloud) -> HeatInfraDriver:
    return HeatInfraDriver(lambda vim: cloud, timeout=5, poll_initial=0.001, poll_max=0.002)


def make_ctx(k8s: tuple[Vnfd, ExtractedPackage], **kw: Any) -> InfraContext:
    vnfd, pkg = k8s
    ctx = InfraContext(
        instance_id=str(uuid.uuid4()),
        op_id="op-1",
        vnfd=vnfd,
        flavour=vnfd.flavour("simple"),
        package=pkg,
        vim=Vim(vim_type="openstack", name="os", access_info={"authUrl": "http://keystone"}),
        **{"ext_virtual_links": EXT, **kw},
    )
    return ctx


class DictPackage:
    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.root = Path("/nonexistent")

    def read(self, path: str) -> bytes:
        return self.files[path]

    def exists(self, path: str) -> bool:
        return path in self.files

    def listing(self) -> list[str]:
        return sorted(self.files)
