"""Issue 21 item 2's edge checks: text that cannot be stored faithfully (a lone surrogate, NUL) is
refused with a 400 naming its path on every route that reads a JSON body, before anything is
stored; a heal, scale or terminate request without a (valid) body is a 400, not an operation."""

from __future__ import annotations

import json

import pytest

from .conftest import Api, seed_body
from .test_hostile_bodies import JSON_ROUTES, assert_refused
from .test_packages import assert_problem

# JSON's own escapes: the bytes on the wire are ASCII, the parsed text is not storable.
SURROGATE_BODY = '{"vnfdId": "x", "metadata": {"k": ["ok", "a\\ud800b"]}}'
SURROGATE_KEY_BODY = '{"vnfdId": "x", "metadata": {"\\udfff": 1}}'
NUL_BODY = '{"vnfdId": "x", "metadata": {"k": "a\\u0000b"}}'


@pytest.mark.parametrize(("method", "path"), JSON_ROUTES)
async def test_unstorable_text_is_refused_on_every_json_route(api: Api, method: str, path: str) -> None:
    headers = {"Content-Type": "application/json"}
    r = await api.c.request(method, path, content=SURROGATE_BODY, headers=headers)
    assert_refused(r, path, 400, "metadata.k[1]: lone surrogate U+D800")
    r = await api.c.request(method, path, content=SURROGATE_KEY_BODY, headers=headers)
    assert_refused(r, path, 400, "metadata: an attribute name: lone surrogate U+DFFF")
    r = await api.c.request(method, path, content=NUL_BODY, headers=headers)
    assert_refused(r, path, 400, "metadata.k: control character U+0000")


async def test_a_surrogate_is_never_half_stored(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    headers = {"Content-Type": "application/json"}
    r = await api.c.post("/vnflcm/v1/vnf_instances", headers=headers,
                         content=api_json({"vnfdId": vnfd_id, "vnfInstanceName": "X"}).replace("X", "\\ud800"))
    assert_problem(r, 400, "vnfInstanceName", "lone surrogate")
    inst_id = await api.create_instance(vnfd_id)
    body = seed_body()
    body["additionalParams"]["note"] = "SURROGATE"
    raw = api_json(body).replace("SURROGATE", "\\udbff")
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", content=raw, headers=headers)
    assert_problem(r, 400, "additionalParams.note", "U+DBFF")
    # Nothing was stored: one instance, no occurrence, and the lists still answer.
    r = await api.c.get("/vnflcm/v1/vnf_instances")
    assert r.status_code == 200 and [i["id"] for i in r.json()] == [inst_id]
    r = await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")
    assert r.status_code == 200 and r.json() == []
    assert (await api.instance(inst_id))["instantiationState"] == "NOT_INSTANTIATED"


def api_json(body: object) -> str:
    return json.dumps(body)


@pytest.mark.parametrize("task", ["heal", "scale", "terminate"])
@pytest.mark.parametrize("content", [b"", b"   ", b"not json", b"[]", b"null"])
async def test_a_task_without_a_valid_body_is_400(onboarded: tuple[Api, str, str], task: str,
                                                   content: bytes) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.instantiated(vnfd_id)
    before = (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json()
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/{task}", content=content,
                         headers={"Content-Type": "application/json"})
    assert_problem(r, 400)
    assert (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == before  # no operation started


async def test_heal_with_an_empty_object_still_heals_the_entire_vnf(onboarded: tuple[Api, str, str]) -> None:
    """SOL003's HealVnfRequest has no mandatory attribute: `{}` (what the stock client sends for
    `openstack vnflcm heal ID`) is a heal of the whole VNF; only a missing body is refused."""
    api, _, vnfd_id = onboarded
    inst_id = await api.instantiated(vnfd_id)
    await api.run(inst_id, "heal", {})


@pytest.mark.parametrize("task", ["retry", "rollback", "fail"])
async def test_a_body_on_a_task_that_takes_none_is_refused(api: Api, task: str) -> None:
    """retry / rollback / fail have no request body (SOL003): one with content is refused, not
    ignored; none (or `{}`) goes on to the occurrence (here: none exists, 404)."""
    path = f"/vnflcm/v1/vnf_lcm_op_occs/00000000-0000-0000-0000-000000000000/{task}"
    assert_problem(await api.c.post(path, json={"cancelMode": "FORCEFUL"}), 400, f"{task} takes no request body")
    assert_problem(await api.c.post(path, content=b"not json"), 400)
    for body in (b"", b"{}"):
        assert_problem(await api.c.post(path, content=body), 404)
