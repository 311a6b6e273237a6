"""SOL003 error handling over HTTP: conflicts, unknown ids, bad requests, and the FAILED_TEMP
occurrence's retry / rollback / fail (faults injected through /sim/v1/faults)."""

from __future__ import annotations

import asyncio
from typing import Any

from .conftest import MASTER_PW, Api, ApiFactory, seed_body
from .test_lcm import INSTANCES, OPS, vnfcs
from .test_packages import assert_problem

MISSING = "00000000-0000-0000-0000-00000000dead"


async def test_second_operation_while_one_runs_is_409(api_factory: ApiFactory) -> None:
    # Servers take 30 s to boot here, so the instantiate stays PROCESSING for the whole test
    # (the engine is cancelled when the app stops).
    api = await api_factory(sim_boot_time=30)
    _, vnfd_id = await api.onboard()
    inst_id = await api.create_instance(vnfd_id)
    loc = await api.task(inst_id, "instantiate", seed_body())
    for task, body in (
        ("scale", {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 1}),
        ("heal", {}),
        ("terminate", {"terminationType": "FORCEFUL"}),
        ("instantiate", seed_body()),
    ):
        r = await api.c.post(f"{INSTANCES}/{inst_id}/{task}", json=body)
        assert_problem(r, 409)
    assert_problem(await api.c.delete(f"{INSTANCES}/{inst_id}"), 409)
    occ = (await api.c.get(loc)).json()
    assert occ["operationState"] in ("STARTING", "PROCESSING")
    # Only one occurrence exists for the instance.
    r = await api.c.get(OPS, params={"filter": f"(eq,vnfInstanceId,{inst_id})"})
    assert len(r.json()) == 1

    # Cancel (5.4.17): the mode is checked, the request recorded (isCancelPending, cancelMode)
    # and answered 202; a second one is a conflict. GRACEFUL waits for the running stage.
    assert_problem(await api.c.post(f"{loc}/cancel", json={"cancelMode": "SOON"}), 400, "cancelMode")
    for _ in range(200):
        occ = (await api.c.get(loc)).json()
        if occ["operationState"] == "PROCESSING":
            break
        await asyncio.sleep(0.01)
    assert occ["isCancelPending"] is False and "cancelMode" not in occ and "cancel" in occ["_links"]
    r = await api.c.post(f"{loc}/cancel", json={"cancelMode": "GRACEFUL"})
    assert r.status_code == 202, r.text
    occ = (await api.c.get(loc)).json()
    assert occ["operationState"] == "PROCESSING" and occ["isCancelPending"] is True
    assert occ["cancelMode"] == "GRACEFUL"
    assert_problem(await api.c.post(f"{loc}/cancel", json={"cancelMode": "FORCEFUL"}), 409, "already being cancelled")


async def test_state_conflicts(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    fresh = await api.create_instance(vnfd_id)
    # Tasks that need an instantiated VNF.
    for task, body in (
        ("scale", {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 1}),
        ("heal", {}),
        ("terminate", {"terminationType": "FORCEFUL"}),
    ):
        assert_problem(await api.c.post(f"{INSTANCES}/{fresh}/{task}", json=body), 409, "NOT_INSTANTIATED")

    inst_id = await api.instantiated(vnfd_id, seed_body(ext_vls=False))
    assert_problem(await api.c.post(f"{INSTANCES}/{inst_id}/instantiate", json=seed_body()), 409, "INSTANTIATED")
    assert_problem(await api.c.delete(f"{INSTANCES}/{inst_id}"), 409)


async def test_unknown_ids_are_404_problems(api: Api) -> None:
    for method, path, body in (
        ("GET", f"{INSTANCES}/{MISSING}", None),
        ("DELETE", f"{INSTANCES}/{MISSING}", None),
        ("POST", f"{INSTANCES}/{MISSING}/instantiate", seed_body()),
        ("POST", f"{INSTANCES}/{MISSING}/scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"}),
        ("POST", f"{INSTANCES}/{MISSING}/heal", {}),
        ("POST", f"{INSTANCES}/{MISSING}/terminate", {"terminationType": "FORCEFUL"}),
        ("GET", f"{OPS}/{MISSING}", None),
        ("POST", f"{OPS}/{MISSING}/retry", None),
        ("POST", f"{OPS}/{MISSING}/rollback", None),
        ("POST", f"{OPS}/{MISSING}/fail", None),
        ("GET", f"/vnflcm/v1/subscriptions/{MISSING}", None),
        ("DELETE", f"/vnflcm/v1/subscriptions/{MISSING}", None),
        ("GET", "/vnflcm/v1/no_such_resource", None),
    ):
        r = await api.c.request(method, path, json=body)
        assert_problem(r, 404)
        if "no_such" not in path:
            assert MISSING in r.json()["detail"], (path, r.json())


async def test_bad_requests_are_400_naming_the_problem(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    # Malformed JSON.
    r = await api.c.post(INSTANCES, content=b'{"vnfdId": "x",', headers={"Content-Type": "application/json"})
    assert_problem(r, 400, "malformed JSON")
    # Unknown attribute: named.
    assert_problem(await api.c.post(INSTANCES, json={"vnfdId": vnfd_id, "vnfFoo": 1}), 400, "vnfFoo")
    # Missing required attribute.
    assert_problem(await api.c.post(INSTANCES, json={}), 400, "vnfdId")
    # Not an object.
    assert_problem(await api.c.post(INSTANCES, json=["vnfdId"]), 400)
    # Unknown vnfdId: nothing onboarded has it.
    r = await api.c.post(INSTANCES, json={"vnfdId": MISSING})
    assert 400 <= r.status_code < 500
    assert_problem(r, r.status_code, MISSING)

    inst_id = await api.create_instance(vnfd_id)
    url = f"{INSTANCES}/{inst_id}"
    r = await api.c.post(f"{url}/instantiate", content=b"{not json", headers={"Content-Type": "application/json"})
    assert_problem(r, 400, "malformed JSON")
    assert_problem(await api.c.post(f"{url}/instantiate", json=seed_body(flavourIdd="simple")), 400, "flavourIdd")
    assert_problem(await api.c.post(f"{url}/instantiate", json={}), 400, "flavourId")
    r = await api.c.post(f"{url}/instantiate", json=seed_body(flavourId="gold"))
    assert 400 <= r.status_code < 500 and "gold" in r.json()["detail"], r.text
    body = seed_body()
    body["extVirtualLinks"][0]["extCps"][0]["cpdId"] = "noSuchCp"
    r = await api.c.post(f"{url}/instantiate", json=body)
    assert 400 <= r.status_code < 500 and "noSuchCp" in r.json()["detail"], r.text
    # Nothing was started by any of these.
    assert (await api.c.get(OPS, params={"filter": f"(eq,vnfInstanceId,{inst_id})"})).json() == []
    assert (await api.instance(inst_id))["instantiationState"] == "NOT_INSTANTIATED"

    await api.run(inst_id, "instantiate", seed_body(ext_vls=False))
    for body, word in (
        ({"type": "SCALE_SIDEWAYS", "aspectId": "worker_instance"}, "type"),
        ({"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 0}, "numberOfSteps"),
        ({"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": "one"}, "numberOfSteps"),
        ({"type": "SCALE_OUT", "aspectId": "worker_instance", "extra": True}, "extra"),
    ):
        assert_problem(await api.c.post(f"{url}/scale", json=body), 400, word)
    r = await api.c.post(f"{url}/scale", json={"type": "SCALE_OUT", "aspectId": "no_aspect"})
    assert 400 <= r.status_code < 500 and "no_aspect" in r.json()["detail"], r.text
    r = await api.c.post(f"{url}/scale", json={"type": "SCALE_OUT", "aspectId": "worker_instance",
                                               "numberOfSteps": 99})
    assert 400 <= r.status_code < 500 and "level" in r.json()["detail"].lower(), r.text
    r = await api.c.post(f"{url}/scale", json={"type": "SCALE_IN", "aspectId": "worker_instance"})
    assert 400 <= r.status_code < 500, r.text
    r = await api.c.post(f"{url}/heal", json={"vnfcInstanceId": [MISSING]})
    assert 400 <= r.status_code < 500 and MISSING in r.json()["detail"], r.text
    assert_problem(await api.c.post(f"{url}/terminate", json={"terminationType": "NOW"}), 400, "terminationType")
    assert_problem(await api.c.post(f"{url}/terminate", json={}), 400, "terminationType")
    ops = (await api.c.get(OPS, params={"filter": f"(eq,vnfInstanceId,{inst_id})"})).json()
    assert [o["operation"] for o in ops] == ["INSTANTIATE"]


async def _failed_instantiate(api: Api, vnfd_id: str) -> tuple[str, str, dict[str, Any]]:
    r = await api.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}})
    assert r.status_code == 204, r.text
    inst_id = await api.create_instance(vnfd_id)
    loc = await api.task(inst_id, "instantiate", seed_body())
    occ = await api.wait_op(loc)
    assert occ["operationState"] == "FAILED_TEMP", occ
    return inst_id, loc, occ


async def test_retry_after_a_build_failure(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id, loc, occ = await _failed_instantiate(api, vnfd_id)
    err = occ["error"]
    assert isinstance(err, dict) and err["status"] >= 400 and err["detail"]
    assert "workerNode" in err["detail"] or "host" in err["detail"].lower(), err
    assert MASTER_PW not in str(occ)
    assert {"retry", "rollback", "fail"} <= set(occ["_links"])
    # Another task on the instance is refused while the occurrence is FAILED_TEMP.
    r = await api.c.post(f"{INSTANCES}/{inst_id}/terminate", json={"terminationType": "FORCEFUL"})
    assert_problem(r, 409)

    r = await api.c.post(f"{loc}/retry")
    assert r.status_code == 202, r.text
    assert r.headers["Location"].endswith(loc)  # the same occurrence
    occ = await api.wait_op(loc)
    assert occ["operationState"] == "COMPLETED", occ.get("error")
    inst = await api.instance(inst_id)
    assert inst["instantiationState"] == "INSTANTIATED"
    assert len(vnfcs(inst, "workerNode")) == 2
    # retry / rollback / fail are only for FAILED_TEMP.
    for task in ("retry", "rollback", "fail"):
        assert_problem(await api.c.post(f"{loc}/{task}"), 409)


async def test_rollback_after_a_build_failure(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id, loc, _ = await _failed_instantiate(api, vnfd_id)
    r = await api.c.post(f"{loc}/rollback")
    assert r.status_code == 202, r.text
    assert r.headers["Location"].endswith(loc)
    occ = await api.wait_op(loc)
    assert occ["operationState"] == "ROLLED_BACK", occ.get("error")
    inst = await api.instance(inst_id)
    assert inst["instantiationState"] == "NOT_INSTANTIATED"
    sim = (await api.c.get("/sim/v1/state")).json()
    servers = sim["servers"].values() if isinstance(sim["servers"], dict) else sim["servers"]
    assert not [s for s in servers if s.get("instance_id") == inst_id]
    # The instance can be instantiated again, then deleted after terminate.
    await api.run(inst_id, "instantiate", seed_body())
    await api.run(inst_id, "terminate", {"terminationType": "GRACEFUL", "gracefulTerminationTimeout": 1})
    assert (await api.c.delete(f"{INSTANCES}/{inst_id}")).status_code == 204


async def test_fail_after_a_build_failure(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id, loc, _ = await _failed_instantiate(api, vnfd_id)
    r = await api.c.post(f"{loc}/fail")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["operationState"] == "FAILED" and body["id"] == loc.rsplit("/", 1)[-1]
    assert (await api.c.get(loc)).json()["operationState"] == "FAILED"
    assert (await api.instance(inst_id))["instantiationState"] == "NOT_INSTANTIATED"
    # The instance is free again: a new instantiate works and builds exactly the flavour's VNFCs.
    await api.run(inst_id, "instantiate", seed_body())
    inst = await api.instance(inst_id)
    assert len(vnfcs(inst)) == 3
    sim = (await api.c.get(f"/sim/v1/state/{inst_id}")).json()
    assert len(sim["servers"]) == 3, sim["servers"]  # nothing left over from the failed attempt


async def test_scale_out_failure_rollback(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.instantiated(vnfd_id, seed_body(ext_vls=False))
    before = {v["id"] for v in vnfcs(await api.instance(inst_id))}
    assert (await api.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}})).status_code == 204
    loc = await api.task(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": "1"})
    occ = await api.wait_op(loc)
    assert occ["operationState"] == "FAILED_TEMP", occ
    assert (await api.c.post(f"{loc}/rollback")).status_code == 202
    occ = await api.wait_op(loc)
    assert occ["operationState"] == "ROLLED_BACK", occ.get("error")
    inst = await api.instance(inst_id)
    assert {v["id"] for v in vnfcs(inst)} == before
    assert next(s for s in inst["instantiatedVnfInfo"]["scaleStatus"]
                if s["aspectId"] == "worker_instance")["scaleLevel"] == 0
