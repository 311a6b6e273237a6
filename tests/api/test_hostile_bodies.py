"""Hostile JSON bodies and URLs (issue 12 items 3, 6, 7): credentials inside URLs never come back;
NUL and other control characters are refused with a 400 naming the attribute (SQLite and
PostgreSQL); deep nesting and large bodies are a 4xx on every JSON route, never a 500; the
fault-injection body is validated."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.unit.db.pgcluster import PgCluster, start_cluster

from .conftest import Api, ApiFactory, seed_body
from .test_packages import assert_problem

ID = "00000000-0000-0000-0000-000000000000"

# Every route that reads a JSON body.
JSON_ROUTES = [
    ("POST", "/vnflcm/v1/vnf_instances"),
    ("PATCH", f"/vnflcm/v1/vnf_instances/{ID}"),
    ("POST", f"/vnflcm/v1/vnf_instances/{ID}/instantiate"),
    ("POST", f"/vnflcm/v1/vnf_instances/{ID}/scale"),
    ("POST", f"/vnflcm/v1/vnf_instances/{ID}/heal"),
    ("POST", f"/vnflcm/v1/vnf_instances/{ID}/terminate"),
    ("POST", f"/vnflcm/v1/vnf_lcm_op_occs/{ID}/cancel"),
    ("POST", "/vnflcm/v1/subscriptions"),
    ("POST", "/vnfpkgm/v1/subscriptions"),
    ("POST", "/vnfpkgm/v1/vnf_packages"),
    ("PATCH", f"/vnfpkgm/v1/vnf_packages/{ID}"),
    ("POST", f"/vnfpkgm/v1/vnf_packages/{ID}/package_content/upload_from_uri"),
    ("POST", "/vnfm/v1/vims"),
    ("POST", "/v1.0/vims.json"),
    ("PUT", f"/v1.0/vims/{ID}.json"),
    ("POST", "/sim/v1/faults"),
]


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster | None]:
    cluster, _reason = start_cluster()
    try:
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
async def any_db_api(request: pytest.FixtureRequest, api_factory: ApiFactory, pg: PgCluster | None) -> Api:
    if request.param == "sqlite":
        return await api_factory()
    if pg is None:
        pytest.skip("PostgreSQL unavailable (no server binaries)")
    url = pg.create_database(f"vnfm_api_{abs(hash(request.node.nodeid)) % 10**8}")
    return await api_factory(database_url=url)


# ------------------------------------------------------------------------------------ URL credentials
async def test_credentials_inside_urls_are_masked_everywhere(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    body = seed_body()
    param = body["additionalParams"]["k8s_cluster_installation_param"]
    param["proxy"] = {"http_proxy": "http://user1:pr0xy-s3cret@host1:3128",
                      "https_proxy": "https://user2:pr0xy-s3cret2@host2:3129", "no_proxy": "10.0.0.1"}
    inst_id = await api.create_instance(vnfd_id, metadata={"mirror": "http://m:meta-s3cret@mirror.example/"})
    occ = await api.run(inst_id, "instantiate", body)
    texts = [
        json.dumps(occ),
        json.dumps(await api.instance(inst_id)),
        (await api.c.get("/vnflcm/v1/vnf_instances?all_fields")).text,
        (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs?all_fields")).text,
        (await api.c.get("/vnflcm/v1/vnf_instances?fields=instantiatedVnfInfo/additionalParams")).text,
    ]
    for text in texts:
        for secret in ("pr0xy-s3cret", "reg-s3cret", "meta-s3cret"):
            assert secret not in text
    shown = (await api.instance(inst_id))["instantiatedVnfInfo"]["additionalParams"]
    assert shown["k8s_cluster_installation_param"]["proxy"]["http_proxy"] == "http://***@host1:3128"
    # What the drivers got was the real value (masking is for output only).
    stored = api.core.instances.get(inst_id).additional_params
    assert stored["k8s_cluster_installation_param"]["proxy"]["https_proxy"] == "https://user2:pr0xy-s3cret2@host2:3129"


# ------------------------------------------------------------------------------------ control characters
async def test_control_characters_are_refused_naming_the_attribute(any_db_api: Api) -> None:
    api = any_db_api
    pkg_id, vnfd_id = await api.onboard()
    r = await api.c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id, "vnfInstanceName": "a\x00b"})
    assert_problem(r, 400, "vnfInstanceName", "U+0000")
    r = await api.c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id, "vnfInstanceName": "a\nb"})
    assert_problem(r, 400, "vnfInstanceName")
    r = await api.c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id, "metadata": {"k\x00": 1}})
    assert_problem(r, 400, "metadata")
    # Free text may hold line breaks.
    inst_id = await api.create_instance(vnfd_id, vnfInstanceDescription="line 1\nline 2\ttab")

    r = await api.c.patch(f"/vnflcm/v1/vnf_instances/{inst_id}", json={"vnfInstanceDescription": "x\x00y"})
    assert_problem(r, 400, "vnfInstanceDescription", "U+0000")
    assert (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == []  # nothing started ...
    loc = await api.task(inst_id, "instantiate", seed_body())  # ... nothing locked
    assert (await api.wait_op(loc))["operationState"] == "COMPLETED"
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/scale",
                         json={"type": "SCALE_OUT", "aspectId": "worker_instance", "additionalParams": {"a": ["\x07"]}})
    assert_problem(r, 400, "additionalParams.a[0]", "U+0007")

    r = await api.c.patch(f"/vnfpkgm/v1/vnf_packages/{pkg_id}", json={"userDefinedData": {"k": "\x00"}})
    assert_problem(r, 400, "userDefinedData.k")
    assert_problem(await api.c.get("/vnflcm/v1/vnf_instances/a%00b"), 400, "control character")
    assert_problem(await api.c.get("/vnflcm/v1/vnf_instances?filter=(eq,id,a%00)"), 400, "filter")
    assert (await api.c.get(f"/vnflcm/v1/vnf_instances/{inst_id}")).status_code == 200


# ------------------------------------------------------------------------------------ depth and size
def assert_refused(r: httpx.Response, path: str, status: int, words: str) -> None:
    if path.startswith("/v1.0/"):  # Tacker's error shape
        assert r.status_code == status, r.text
        assert words in r.json()["TackerError"]["message"]
    else:
        assert_problem(r, status, words)


@pytest.mark.parametrize(("method", "path"), JSON_ROUTES)
async def test_deep_or_large_bodies_are_refused_not_500(api: Api, method: str, path: str) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    r = await api.c.request(method, path, content=deep, headers={"Content-Type": "application/json"})
    assert_refused(r, path, 400, "deeper than")
    nested: Any = {}
    for _ in range(40):
        nested = {"k": nested}
    r = await api.c.request(method, path, json={"vnfdId": "x", "metadata": nested})
    assert_refused(r, path, 400, "deeper than")
    big = json.dumps({"vnfdId": "x", "metadata": {"blob": "x" * (2 * 1024 * 1024)}})
    r = await api.c.request(method, path, content=big, headers={"Content-Type": "application/json"})
    assert_refused(r, path, 413, "over the limit")


async def test_the_largest_seed_request_still_fits(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    body = copy.deepcopy(seed_body())
    master = body["additionalParams"]["k8s_cluster_installation_param"]["master_node"]  # the largest free text
    key = "OPENSSH PRIVATE KEY-----"
    master["ssh_private_key"] = f"-----BEGIN {key}\n{'x' * 200_000}\n-----END {key}\n"
    inst_id = await api.create_instance(vnfd_id)
    await api.run(inst_id, "instantiate", body)


# ------------------------------------------------------------------------------------ fault injection
@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"": None}, ["not an attribute"]),
        ({"explode": True}, ["explode", "not an attribute"]),
        ({"fail_build": {"workerNode": "one"}}, ["fail_build.workerNode"]),
        ({"fail_build": {"workerNode": -1}}, ["fail_build.workerNode"]),
        ({"unreachable": "abc"}, ["unreachable"]),
        ({"fail_delete": True}, ["fail_delete"]),
        ([], ["JSON object"]),
        ({}, ["names no fault"]),
    ],
)
async def test_fault_injection_body_is_validated(api: Api, body: Any, words: list[str]) -> None:
    assert_problem(await api.c.post("/sim/v1/faults", json=body), 400, *words)


async def test_fault_injection_still_works(tmp_path: Path, api: Api) -> None:
    r = await api.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}, "fail_delete": 0})
    assert r.status_code == 204, r.text
    assert api.core.sim.snapshot()["faults"]["fail_build"] == {"workerNode": 1}
