"""End-to-end tests of the REST API: the real FastAPI app (create_app) with its lifespan running,
driven through httpx.ASGITransport, on SQLite in tmp_path and the simulated cloud with zero latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import httpx
import pytest
from fastapi import FastAPI

from vnfm.bootstrap import App
from vnfm.config import Settings
from vnfm.entrypoints.api.app import create_app
from vnfm.examples import example_csar
from vnfm.packaging.csar import build_csar

TERMINAL = {"COMPLETED", "FAILED", "FAILED_TEMP", "ROLLED_BACK"}

MASTER_PW = "Mast3r-s3cret"
WORKER_PW = "W0rker-s3cret"

# Shaped like seed 002's simple_kubernetes_param_file.json (the compatibility contract). The VIM id
# is unknown to this server and vimType is openstack: it runs on the default (simulated) VIM.
SEED_INSTANTIATE: dict[str, Any] = {
    "flavourId": "simple",
    "vimConnectionInfo": [
        {
            "id": "daa80cf2-9b73-4806-8176-56cd6fab8cea",
            "vimId": "c3369b54-e376-4423-bb61-afd255900fea",
            "vimType": "openstack",
        }
    ],
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "script_path": "Scripts/install_k8s_cluster.sh",
            "vim_name": "kubernetes_vim",
            "master_node": {
                "aspect_id": "master_instance",
                "ssh_cp_name": "masterNode_CP1",
                "nic_cp_name": "masterNode_CP1",
                "username": "ubuntu",
                "password": MASTER_PW,
                "pod_cidr": "192.168.0.0/16",
                "cluster_cidr": "10.199.187.0/24",
                "cluster_cp_name": "masterNode_CP1",
            },
            "worker_node": {
                "aspect_id": "worker_instance",
                "ssh_cp_name": "workerNode_CP2",
                "nic_cp_name": "workerNode_CP2",
                "username": "ubuntu",
                "password": WORKER_PW,
            },
        },
        "lcm-operation-user-data": "./UserData/k8s_cluster_user_data.py",
        "lcm-operation-user-data-class": "KubernetesClusterUserData",
    },
    "extVirtualLinks": [
        {
            "id": "35d69de0-bf3b-4690-8724-16e9edb68b19",
            "resourceId": "1642ac54-642c-407c-9c7d-e94c55ba5d33",
            "extCps": [
                {"cpdId": "masterNode_CP1", "cpConfig": [{"linkPortId": "35d69de0-bf3b-4690-8724-16e9edb68b19"}]}
            ],
        },
        {
            "id": "fb60ddb1-8787-49cd-8439-d379a449b6fa",
            "resourceId": "1642ac54-642c-407c-9c7d-e94c55ba5d33",
            "extCps": [
                {"cpdId": "workerNode_CP2", "cpConfig": [{"linkPortId": "fb60ddb1-8787-49cd-8439-d379a449b6fa"}]}
            ],
        },
    ],
}


def seed_body(*, ext_vls: bool = True, **changes: Any) -> dict[str, Any]:
    body = copy.deepcopy(SEED_INSTANTIATE)
    if not ext_vls:
        body.pop("extVirtualLinks")
    body.update(changes)
    return body


@functools.cache
def csar_bytes() -> bytes:
    return example_csar()


TACKER_SAMPLES_DIR = Path(__file__).resolve().parent / "packages"
# Test packages shaped like Tacker's samples (samples/mgmt_driver/kubernetes/...), as its user
# guides have them built: TOSCA.meta style (the image listed without a checksum), hook and
# artifact names, Definitions layout. Their content is written here; the image is a stand-in.
TACKER_SAMPLES = ("kubeadm", "private_registry", "kubespray", "cnf_nodeport")


@functools.cache
def tacker_sample_csar(name: str) -> bytes:
    """The CSAR of tests/api/packages/<name> (TOSCA.meta hashes computed, as the guides say)."""
    return build_csar(TACKER_SAMPLES_DIR / name)


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    kw: dict[str, Any] = {"data_dir": tmp_path, "probe_callbacks": False, "sim_boot_time": 0, "sim_step_time": 0,
                          "auth_token": "", "fault_injection": True,
                          # the test callbacks, token endpoints and package servers run on loopback
                          "egress_allow_networks": ["127.0.0.0/8"]}
    kw.update(overrides)
    return Settings(**kw)


class LocalHttpServer:
    """An HTTP server on 127.0.0.1 (a free port) served by a thread while the `with` block runs."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Self:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class Api:
    """The running app plus helpers that only speak HTTP."""

    def __init__(self, app: FastAPI, client: httpx.AsyncClient) -> None:
        self.app = app
        self.c = client

    @property
    def core(self) -> App:
        core: App = self.app.state.vnfm
        return core

    # ------------------------------------------------------------- SOL005
    async def create_package(self, body: dict[str, Any] | None = None) -> str:
        r = await self.c.post("/vnfpkgm/v1/vnf_packages", json=body or {})
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    async def upload(self, pkg_id: str, data: bytes | None = None) -> httpx.Response:
        return await self.c.put(f"/vnfpkgm/v1/vnf_packages/{pkg_id}/package_content",
                                content=csar_bytes() if data is None else data,
                                headers={"Content-Type": "application/zip"})

    async def onboard(self) -> tuple[str, str]:
        pkg_id = await self.create_package()
        r = await self.upload(pkg_id)
        assert r.status_code == 202, r.text
        info = (await self.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()
        assert info["onboardingState"] == "ONBOARDED", info
        return pkg_id, str(info["vnfdId"])

    # ------------------------------------------------------------- SOL003
    async def create_instance(self, vnfd_id: str, **extra: Any) -> str:
        r = await self.c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id, **extra})
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    async def task(self, inst_id: str, task: str, body: Any) -> str:
        """POST an LCM task; return the occurrence URL (asserts 202 + Location)."""
        r = await self.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/{task}", json=body)
        assert r.status_code == 202, r.text
        loc = r.headers["Location"]
        assert "/vnflcm/v1/vnf_lcm_op_occs/" in loc
        return loc

    async def wait_op(self, loc: str, states: set[str] | None = None, timeout: float = 20.0) -> dict[str, Any]:
        want = states or TERMINAL
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            r = await self.c.get(loc)
            assert r.status_code == 200, r.text
            body: dict[str, Any] = r.json()
            if body["operationState"] in want and body["id"] not in self.core.engine.running:
                return body
            if loop.time() > deadline:
                raise TimeoutError(f"{loc} still {body['operationState']}")
            await asyncio.sleep(0.005)

    async def run(self, inst_id: str, task: str, body: Any, expect: str = "COMPLETED") -> dict[str, Any]:
        occ = await self.wait_op(await self.task(inst_id, task, body))
        assert occ["operationState"] == expect, occ.get("error")
        return occ

    async def instance(self, inst_id: str) -> dict[str, Any]:
        r = await self.c.get(f"/vnflcm/v1/vnf_instances/{inst_id}")
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    async def instantiated(self, vnfd_id: str, body: dict[str, Any] | None = None) -> str:
        inst_id = await self.create_instance(vnfd_id)
        await self.run(inst_id, "instantiate", body or seed_body())
        return inst_id


@contextlib.asynccontextmanager
async def running_api(settings: Settings) -> AsyncIterator[Api]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://vnfm.test") as client:
            yield Api(app, client)


ApiFactory = Callable[..., Awaitable[Api]]


@pytest.fixture
async def api_factory(tmp_path: Path) -> AsyncIterator[ApiFactory]:
    """Start extra apps with other settings (each in its own data dir)."""
    async with contextlib.AsyncExitStack() as stack:
        n = 0

        async def make(**overrides: Any) -> Api:
            nonlocal n
            n += 1
            data = tmp_path / f"app{n}"
            return await stack.enter_async_context(running_api(settings_for(data, **overrides)))

        yield make


@pytest.fixture
async def api(api_factory: ApiFactory) -> Api:
    return await api_factory()


@pytest.fixture
async def onboarded(api: Api) -> tuple[Api, str, str]:
    pkg_id, vnfd_id = await api.onboard()
    return api, pkg_id, vnfd_id
