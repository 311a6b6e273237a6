"""Builders for the simulated cloud's tests: a Kubernetes-cluster-like flavour and contexts."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from vnfm.adapters.infra.simulator import SimCloud, SimConfig, SimulatorInfraDriver
from vnfm.domain.model import Vim
from vnfm.domain.vnfd import Cp, Flavour, Vdu, VirtualLink, VirtualStorage, Vnfd
from vnfm.service.ports import InfraContext

NET0 = "f0c82461-36b5-4d86-8322-b0bc19cda65f"


def make_flavour() -> Flavour:
    vdus = {
        "masterNode": Vdu(
            "masterNode", "masterNode", min_instances=1, max_instances=3, sw_image="ubuntu-20.04"
        ),
        "workerNode": Vdu(
            "workerNode", "workerNode", min_instances=2, max_instances=12, num_cpus=2, memory_mb=4096
        ),
        "storage_server": Vdu(
            "storage_server", "storage_server", storages=("storage_server_volume",), sw_image="ubuntu-20.04"
        ),
    }
    cps = {
        "masterNode_CP1": Cp("masterNode_CP1", "masterNode"),
        "workerNode_CP2": Cp("workerNode_CP2", "workerNode"),
        "workerNode_CP3": Cp("workerNode_CP3", "workerNode", virtual_link="internalVL1", order=1),
        "storage_server_CP": Cp("storage_server_CP", "storage_server"),
    }
    return Flavour(
        id="simple",
        vdus=vdus,
        cps=cps,
        virtual_links={
            "internalVL1": VirtualLink("internalVL1"),
            "internalVL2": VirtualLink("internalVL2", cidr="192.168.100.0/24"),
        },
        storages={"storage_server_volume": VirtualStorage("storage_server_volume", size_gb=5)},
    )


def ext_links(fixed_master: str | None = None) -> list[dict[str, Any]]:
    def ext_cp(cpd: str, fixed: str | None = None) -> dict[str, Any]:
        proto: dict[str, Any] = {"layerProtocol": "IP_OVER_ETHERNET"}
        if fixed:
            proto["ipOverEthernet"] = {"ipAddresses": [{"type": "IPV4", "fixedAddresses": [fixed]}]}
        return {"cpdId": cpd, "cpConfig": [{"cpProtocolData": [proto]}]}

    return [
        {"id": "net0_master", "resourceId": NET0, "extCps": [ext_cp("masterNode_CP1", fixed_master)]},
        {"id": "net0_worker", "resourceId": NET0, "extCps": [ext_cp("workerNode_CP2")]},
    ]


def make_ctx(
    instance_id: str | None = None,
    *,
    op_id: str | None = None,
    flavour: Flavour | None = None,
    links: list[dict[str, Any]] | None = None,
    messages: list[str] | None = None,
) -> InfraContext:
    fl = flavour or make_flavour()
    vnfd = Vnfd(
        id="b1bb0ce7-ebca-4fa7-95ed-4840d70a1177",
        version="1.0",
        provider="Company",
        product_name="Sample VNF",
        software_version="1.0",
        flavours={fl.id: fl},
    )
    sink = messages if messages is not None else []
    return InfraContext(
        instance_id=instance_id or str(uuid.uuid4()),
        op_id=op_id or str(uuid.uuid4()),
        vnfd=vnfd,
        flavour=fl,
        package=None,
        vim=Vim(vim_type="simulator", name="sim"),
        ext_virtual_links=ext_links() if links is None else links,
        progress=sink.append,
    )


@pytest.fixture(name="make_ctx")
def make_ctx_fixture() -> Any:
    return make_ctx


@pytest.fixture(name="make_flavour")
def make_flavour_fixture() -> Any:
    return make_flavour


@pytest.fixture(name="ext_links")
def ext_links_fixture() -> Any:
    return ext_links


@pytest.fixture
def counts() -> dict[str, int]:
    return {"masterNode": 1, "workerNode": 2, "storage_server": 1}


@pytest.fixture
def cloud() -> SimCloud:
    return SimCloud(config=SimConfig(boot_time=0, api_latency=0, delete_time=0))


@pytest.fixture
def driver(cloud: SimCloud) -> SimulatorInfraDriver:
    return SimulatorInfraDriver(cloud)


@pytest.fixture
def net0() -> str:
    return NET0
