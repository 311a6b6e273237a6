"""/vnflcm/v2 VNF instances: create, list, show, PATCH, delete, instantiate, scale, heal,
terminate, change_vnfpkg, each answer checked against SOL003 v3.3.1; one instance is seen and
operated through both APIs."""

from __future__ import annotations

import json

from vnfm.examples import example_csar_version

from ..conftest import MASTER_PW, seed_body
from . import schemas as s
from .conftest import V2, VERSION, V2Api, check, problem, v2_instantiate

NEW_VNFD = "5f2a9c1e-7b3d-4e8a-9c6f-000000000011"


async def test_lifecycle_through_v2(v2: V2Api) -> None:
    created = await v2.create(vnfInstanceName="through-v2", metadata={"owner": "v2"})
    inst_id = created["id"]
    assert created["instantiationState"] == "NOT_INSTANTIATED" and "vnfPkgId" not in created
    assert created["_links"]["instantiate"]["href"] == f"{V2}/vnf_instances/{inst_id}/instantiate"

    occ = await v2.run(inst_id, "instantiate", v2_instantiate())
    assert occ["operation"] == "INSTANTIATE" and occ["_links"]["vnfInstance"]["href"] == f"{V2}/vnf_instances/{inst_id}"
    assert MASTER_PW not in json.dumps(occ)  # secrets masked, as on v1
    assert "daa80cf2-9b73-4806-8176-56cd6fab8cea" in occ["operationParams"]["vimConnectionInfo"]  # a map
    inst = await v2.show(inst_id)
    info = inst["instantiatedVnfInfo"]
    assert "daa80cf2-9b73-4806-8176-56cd6fab8cea" in inst["vimConnectionInfo"]  # a map (+ the cluster VIM)
    assert "additionalParams" not in info and all(c["vnfdId"] == v2.vnfd_id for c in info["vnfcResourceInfo"])
    assert {c["cpdId"]: c["cpConfigId"] for c in info["extCpInfo"]}["masterNode_CP1"] == "0"
    ext = {e["id"]: e for e in info["extVirtualLinkInfo"]}["35d69de0-bf3b-4690-8724-16e9edb68b19"]
    assert ext["currentVnfExtCpData"][0]["cpConfig"] == {"0": {"linkPortId": "35d69de0-bf3b-4690-8724-16e9edb68b19"}}
    assert set(inst["_links"]) == {"self", "terminate", "scale", "heal"}
    workers = [v for v in info["vnfcResourceInfo"] if v["vduId"] == "workerNode"]

    occ = await v2.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    added = [a for a in occ["resourceChanges"]["affectedVnfcs"] if a["changeType"] == "ADDED"]
    assert len(added) == 1
    after = (await v2.show(inst_id))["instantiatedVnfInfo"]
    assert len([v for v in after["vnfcResourceInfo"] if v["vduId"] == "workerNode"]) == len(workers) + 1

    # heal names VnfcInfo ids (v3.3.1); the occurrence records the VNFC healed
    vnfc_info = {i["vnfcResourceInfoId"]: i["id"] for i in after["vnfcInfo"]}
    target = workers[0]["id"]
    occ = await v2.run(inst_id, "heal", {"vnfcInstanceId": [vnfc_info[target]], "cause": "v2 contract"})
    assert occ["operationParams"]["vnfcInstanceId"] == [target]
    problem(await v2.c.post(f"{V2}/vnf_instances/{inst_id}/heal", json={"vnfcInstanceId": ["nope-info"]}), 422,
            "nope")
    problem(await v2.c.post(f"{V2}/vnf_instances/{inst_id}/heal", json={"healScript": "x"}), 400, "healScript")

    await v2.run(inst_id, "terminate", {"terminationType": "FORCEFUL"})
    assert (await v2.show(inst_id))["instantiationState"] == "NOT_INSTANTIATED"
    r = await v2.c.delete(f"{V2}/vnf_instances/{inst_id}")
    assert r.status_code == 204 and r.headers["Version"] == "2.0.0"
    problem(await v2.c.get(f"{V2}/vnf_instances/{inst_id}"), 404, inst_id)


async def test_one_instance_through_both_apis(v2: V2Api) -> None:
    api = v2.api
    # made through v1, instantiated through v2, scaled through v1, seen through both
    inst_id = await api.create_instance(v2.vnfd_id)
    await v2.run(inst_id, "instantiate", v2_instantiate())
    await api.run(inst_id, "scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"})
    one, two = await api.instance(inst_id), await v2.show(inst_id)
    assert one["vnfPkgId"] and "vnfPkgId" not in two
    assert [c["id"] for c in one["vimConnectionInfo"]] == list(two["vimConnectionInfo"])
    assert ([v["id"] for v in one["instantiatedVnfInfo"]["vnfcResourceInfo"]]
            == [v["id"] for v in two["instantiatedVnfInfo"]["vnfcResourceInfo"]])
    ops = (await v2.c.get(f"{V2}/vnf_lcm_op_occs", params={"filter": f"(eq,vnfInstanceId,{inst_id})"})).json()
    assert sorted(o["operation"] for o in ops) == ["INSTANTIATE", "SCALE"]
    for o in ops:
        check(s.VnfLcmOpOcc, o)
        assert o["_links"]["self"]["href"].startswith(f"{V2}/vnf_lcm_op_occs/")
    # made through v2, terminated through v1, deleted through v2
    other = (await v2.create())["id"]
    await api.run(other, "instantiate", seed_body())
    await api.run(other, "terminate", {"terminationType": "FORCEFUL"})
    assert (await v2.c.delete(f"{V2}/vnf_instances/{other}")).status_code == 204
    assert (await api.c.get(f"/vnflcm/v1/vnf_instances/{other}")).status_code == 404


async def test_modify_with_etag_and_v3_attributes(v2: V2Api) -> None:
    inst = await v2.create(vnfInstanceName="before")
    url = f"{V2}/vnf_instances/{inst['id']}"
    r = await v2.c.get(url)
    etag = r.headers["ETag"]
    problem(await v2.c.patch(url, json={"vnfInstanceName": "x"}, headers={"If-Match": '"stale"'}), 412)
    r = await v2.c.patch(url, json={"vnfInstanceName": "after", "vnfdId": v2.vnfd_id,
                                    "vimConnectionInfo": {"vim-a": {"vimType": "openstack", "vimId": "v-1"}}},
                         headers={"If-Match": etag, "Content-Type": "application/merge-patch+json"})
    assert r.status_code == 202, r.text
    occ = await v2.wait(r.headers["Location"])
    assert occ["operation"] == "MODIFY_INFO" and occ["operationState"] == "COMPLETED"
    assert occ["changedInfo"]["vnfInstanceName"] == "after"
    s.VnfInfoModifications.model_validate(occ["changedInfo"])
    shown = await v2.show(inst["id"])
    assert shown["vnfInstanceName"] == "after" and shown["vimConnectionInfo"]["vim-a"]["vimId"] == "v-1"
    problem(await v2.c.patch(url, json={"vnfdId": "another"}), 422, "vnfdId", "change_vnfpkg")
    problem(await v2.c.patch(url, json={"vnfcInfoModifications": [{"id": "x", "vnfcConfigurableProperties": {}}]}),
            422, "vnfcInfoModifications")
    problem(await v2.c.patch(url, json={"vimConnectionInfo": {"vim-a": None}}), 422, "vim-a")
    problem(await v2.c.patch(url, json={"vnfPkgId": "x"}), 400, "vnfPkgId")
    assert (await v2.show(inst["id"]))["vnfInstanceName"] == "after"


async def test_refused_requests_create_nothing(v2: V2Api) -> None:
    inst_id = (await v2.create())["id"]
    url = f"{V2}/vnf_instances/{inst_id}"
    problem(await v2.c.post(f"{V2}/vnf_instances", json={"vnfdId": v2.vnfd_id, "vnfPkgId": "x"}), 400, "vnfPkgId")
    problem(await v2.c.post(f"{V2}/vnf_instances", json={"vnfdId": "unknown"}), 422)
    # v2.6.1's list form of vimConnectionInfo is not v3.3.1's map
    problem(await v2.c.post(f"{url}/instantiate", json=seed_body()), 400, "vimConnectionInfo")
    problem(await v2.c.post(f"{url}/instantiate", json=v2_instantiate(targetScaleLevelInfo=[])), 422,
            "targetScaleLevelInfo")
    problem(await v2.c.post(f"{url}/instantiate", json=v2_instantiate(extensions={"a": 1})), 422, "extensions")
    problem(await v2.c.post(f"{url}/instantiate", json=v2_instantiate(flavourId="nope")), 422, "nope")
    problem(await v2.c.post(f"{url}/instantiate"), 400, "no body")
    problem(await v2.c.post(f"{url}/scale", json={"type": "SCALE_OUT", "aspectId": "worker_instance"}), 409)
    problem(await v2.c.post(f"{url}/terminate", json={"terminationType": "SOFT"}), 400, "terminationType")
    problem(await v2.c.post(f"{V2}/vnf_instances/nope/instantiate", json=v2_instantiate()), 404, "nope")
    r = await v2.c.get(f"{V2}/vnf_lcm_op_occs")
    assert r.status_code == 200 and r.json() == []
    assert (await v2.show(inst_id))["instantiationState"] == "NOT_INSTANTIATED"


async def test_change_vnfpkg_upgrades_the_cluster(v2: V2Api) -> None:
    """SOL003 v3.3.1 change_vnfpkg on the same engine as v1 (README "Kubernetes upgrades")."""
    inst_id = (await v2.create())["id"]
    url = f"{V2}/vnf_instances/{inst_id}/change_vnfpkg"
    problem(await v2.c.post(url, json={"additionalParams": {}}), 400, "vnfdId")
    problem(await v2.c.post(url, json={"vnfdId": v2.vnfd_id, "vnfPkgId": "x"}), 400, "vnfPkgId")
    problem(await v2.c.post(url, json={"vnfdId": v2.vnfd_id, "vimConnectionInfo": [{"id": "a"}]}), 400,
            "vimConnectionInfo")
    problem(await v2.c.post(url, json={"vnfdId": v2.vnfd_id}), 409, "NOT_INSTANTIATED")
    problem(await v2.c.post(f"{V2}/vnf_instances/nope/change_vnfpkg", json={"vnfdId": v2.vnfd_id}), 404, "nope")
    await v2.run(inst_id, "instantiate", v2_instantiate())
    pkg_id = await v2.api.create_package()
    assert (await v2.api.upload(pkg_id, example_csar_version("1.1", NEW_VNFD))).status_code == 202
    up = {"k8s_cluster_installation_param": {"kubernetes_version": "1.31.2"}}
    problem(await v2.c.post(url, json={"vnfdId": v2.vnfd_id, "additionalParams": up}), 422, "already runs")
    occ = await v2.run(inst_id, "change_vnfpkg", {"vnfdId": NEW_VNFD, "additionalParams": up})
    assert occ["operation"] == "CHANGE_VNFPKG"
    shown = await v2.show(inst_id)
    assert shown["vnfdId"] == NEW_VNFD and shown["vnfdVersion"] == "1.1"


async def test_tasks_vnfm_does_not_implement_answer_404_naming_them(v2: V2Api) -> None:
    inst_id = (await v2.create())["id"]
    for task, operation in (("scale_to_level", "SCALE_TO_LEVEL"), ("change_flavour", "CHANGE_FLAVOUR"),
                            ("operate", "OPERATE"), ("change_ext_conn", "CHANGE_EXT_CONN"),
                            ("create_snapshot", "CREATE_SNAPSHOT"), ("revert_to_snapshot", "REVERT_TO_SNAPSHOT")):
        body = problem(await v2.c.post(f"{V2}/vnf_instances/{inst_id}/{task}", json={}), 404, operation)
        assert body["operation"] == operation
    problem(await v2.c.post(f"{V2}/vnf_instances/nope/operate", json={}), 404, "nope")
    problem(await v2.api.c.post(f"{V2}/vnf_instances/{inst_id}/operate", json={}), 400, "Version")


async def test_v2_instantiate_takes_the_autoheal_flag(v2: V2Api) -> None:
    """vnfConfigurableProperties at instantiate (Tacker's v2 way to opt in to automatic heal)."""
    inst_id = str((await v2.create())["id"])
    bad = v2_instantiate(vnfConfigurableProperties={"isAutohealEnabled": "yes"})
    problem(await v2.api.c.post(f"{V2}/vnf_instances/{inst_id}/instantiate", json=bad, headers=VERSION), 400,
            "isAutohealEnabled")
    await v2.run(inst_id, "instantiate", v2_instantiate(vnfConfigurableProperties={"isAutohealEnabled": True}))
    assert (await v2.show(inst_id))["vnfConfigurableProperties"] == {"isAutohealEnabled": True}
