"""/vnflcm/v2 operation occurrences: show, list, retry, rollback, fail, cancel."""

from __future__ import annotations

from .conftest import V2, V2Api, problem, v2_instantiate


async def _failed(v2: V2Api) -> tuple[str, dict[str, object]]:
    """An instantiation left FAILED_TEMP by a server that failed to build (the simulator's fault)."""
    assert (await v2.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}})).status_code == 204
    inst_id = str((await v2.create())["id"])
    occ = await v2.wait(await v2.task(inst_id, "instantiate", v2_instantiate()))
    assert occ["operationState"] == "FAILED_TEMP", occ
    assert set(occ["_links"]) == {"self", "vnfInstance", "retry", "rollback", "fail"}
    assert occ["error"]["status"] and occ["error"]["detail"]
    return inst_id, occ


async def test_retry_completes_a_failed_operation(v2: V2Api) -> None:
    inst_id, occ = await _failed(v2)
    url = f"{V2}/vnf_lcm_op_occs/{occ['id']}"
    problem(await v2.c.post(f"{url}/retry", json={"please": 1}), 400, "no request body")
    r = await v2.c.post(f"{url}/retry")
    assert r.status_code == 202 and r.headers["Location"].endswith(url)
    done = await v2.wait(r.headers["Location"])
    assert done["operationState"] == "COMPLETED" and "retry" not in done["_links"]
    assert (await v2.show(inst_id))["instantiationState"] == "INSTANTIATED"
    problem(await v2.c.post(f"{url}/retry"), 409)
    problem(await v2.c.post(f"{url}/cancel", json={"cancelMode": "GRACEFUL"}), 409)


async def test_rollback_and_fail(v2: V2Api) -> None:
    inst_id, occ = await _failed(v2)
    url = f"{V2}/vnf_lcm_op_occs/{occ['id']}"
    r = await v2.c.post(f"{url}/rollback")
    assert r.status_code == 202
    rolled = await v2.wait(r.headers["Location"])
    assert rolled["operationState"] == "ROLLED_BACK"
    assert (await v2.show(inst_id))["instantiationState"] == "NOT_INSTANTIATED"

    inst2, occ2 = await _failed(v2)
    r = await v2.c.post(f"{V2}/vnf_lcm_op_occs/{occ2['id']}/fail")
    assert r.status_code == 200 and r.headers["Version"] == "2.0.0"
    assert r.json()["operationState"] == "FAILED" and r.json()["_links"]["self"]["href"].startswith(V2)
    problem(await v2.c.post(f"{V2}/vnf_lcm_op_occs/{occ2['id']}/rollback"), 409)
    problem(await v2.c.get(f"{V2}/vnf_lcm_op_occs/nope"), 404, "nope")
    problem(await v2.c.post(f"{V2}/vnf_lcm_op_occs/nope/cancel", json={"cancelMode": "FORCEFUL"}), 404)
    problem(await v2.c.post(f"{V2}/vnf_lcm_op_occs/{occ2['id']}/cancel", json={"cancelMode": "SOFT"}), 400)
    listed = (await v2.c.get(f"{V2}/vnf_lcm_op_occs", params={"filter": "(eq,operationState,FAILED)"})).json()
    assert [o["id"] for o in listed] == [occ2["id"]] and "operationParams" not in listed[0]
