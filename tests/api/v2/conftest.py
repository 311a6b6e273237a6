"""Helpers of the /vnflcm/v2 contract tests: the `v2` fixture is the running app (tests/api's
`api`) with a package onboarded and a client that sends `Version: 2.0.0`, checking every
answer against the SOL003 v3.3.1 data model (schemas.py)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from ..conftest import TERMINAL, Api, seed_body
from . import schemas as s

V2 = "/vnflcm/v2"
VERSION = {"Version": "2.0.0"}
PROBLEM = "application/problem+json"


def v2_instantiate(**changes: Any) -> dict[str, Any]:
    """The seed's instantiate request as v3.3.1 writes it: vimConnectionInfo is a map."""
    body = seed_body(**changes)
    body["vimConnectionInfo"] = {c["id"]: {k: v for k, v in c.items() if k != "id"}
                                 for c in body["vimConnectionInfo"]}
    return copy.deepcopy(body)


def check(model: type[BaseModel], doc: Any) -> dict[str, Any]:
    """`doc` validated against a v3.3.1 model (a ValidationError names what is wrong)."""
    model.model_validate(doc)
    assert isinstance(doc, dict)
    return doc


def problem(r: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM), r.headers
    assert r.headers["Version"] == "2.0.0", r.headers
    body = check(s.ProblemDetails, r.json())
    assert body["status"] == status
    for w in words:
        assert w.lower() in body["detail"].lower(), body["detail"]
    return body


class V2Api:
    def __init__(self, api: Api, vnfd_id: str) -> None:
        self.api = api
        self.vnfd_id = vnfd_id
        self.c = httpx.AsyncClient(transport=api.c._transport, base_url=str(api.c.base_url), headers=VERSION)

    async def create(self, **extra: Any) -> dict[str, Any]:
        r = await self.c.post(f"{V2}/vnf_instances", json={"vnfdId": self.vnfd_id, **extra})
        assert r.status_code == 201, r.text
        assert r.headers["Version"] == "2.0.0"
        body = check(s.VnfInstance, r.json())
        assert r.headers["Location"].endswith(f"{V2}/vnf_instances/{body['id']}")
        return body

    async def show(self, inst_id: str) -> dict[str, Any]:
        r = await self.c.get(f"{V2}/vnf_instances/{inst_id}")
        assert r.status_code == 200, r.text
        return check(s.VnfInstance, r.json())

    async def task(self, inst_id: str, task: str, body: Any) -> str:
        r = await self.c.post(f"{V2}/vnf_instances/{inst_id}/{task}", json=body)
        assert r.status_code == 202, r.text
        assert r.content == b"" and r.headers["Version"] == "2.0.0"
        loc = r.headers["Location"]
        assert f"{V2}/vnf_lcm_op_occs/" in loc, loc
        return loc

    async def wait(self, loc: str, states: set[str] | None = None, timeout: float = 20.0) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            r = await self.c.get(loc)
            assert r.status_code == 200, r.text
            body = check(s.VnfLcmOpOcc, r.json())
            if body["operationState"] in (states or TERMINAL) and body["id"] not in self.api.core.engine.running:
                return body
            assert loop.time() < deadline, f"{loc} still {body['operationState']}"
            await asyncio.sleep(0.005)

    async def run(self, inst_id: str, task: str, body: Any, expect: str = "COMPLETED") -> dict[str, Any]:
        occ = await self.wait(await self.task(inst_id, task, body))
        assert occ["operationState"] == expect, occ.get("error")
        return occ

    async def instantiated(self) -> str:
        inst_id = str((await self.create())["id"])
        await self.run(inst_id, "instantiate", v2_instantiate())
        return inst_id


@pytest.fixture
async def v2(onboarded: tuple[Api, str, str]) -> Any:
    api, _, vnfd_id = onboarded
    client = V2Api(api, vnfd_id)
    try:
        yield client
    finally:
        await client.c.aclose()
