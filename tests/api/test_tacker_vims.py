"""Tacker's VIM routes (/v1.0/vims[.json]) over vnfm's VIM registry, and the vimType spellings:
both the seeds' (`openstack`, `kubernetes`) and SOL003's (ETSINFV...) are accepted; the seeds'
one is reported."""

from __future__ import annotations

from .conftest import Api, seed_body

K8S = {"vim": {"name": "k8s", "type": "kubernetes", "auth_url": "https://u:url-s3cret@192.0.2.20:6443",
               "vim_project": {"name": "default"}, "auth_cred": {"bearer_token": "t0ken-s3cret"}}}


async def test_tacker_vim_routes_shapes_and_errors(api: Api) -> None:
    r = await api.c.post("/v1.0/vims.json", json=K8S)
    assert r.status_code == 201, r.text
    vim = r.json()["vim"]
    assert vim["type"] == "kubernetes" and vim["auth_cred"] == {"bearer_token": "***"}
    assert vim["auth_url"] == "https://***@192.0.2.20:6443" and vim["status"] == "ACTIVE"
    assert "s3cret" not in r.text
    r = await api.c.get("/v1.0/vims.json", params={"name": "k8s", "fields": "id"})
    assert r.json() == {"vims": [{"id": vim["id"]}]}
    assert (await api.c.get(f"/v1.0/vims/{vim['id']}.json")).json()["vim"]["name"] == "k8s"
    assert (await api.c.get(f"/v1.0/vims/{vim['id']}")).status_code == 200

    r = await api.c.post("/v1.0/vims.json", json=K8S)  # the name is taken
    assert r.status_code == 409 and "k8s" in r.json()["TackerError"]["message"]
    r = await api.c.get("/v1.0/vims/nope.json")
    assert r.status_code == 404 and r.json()["TackerError"]["type"] == "NotFound"
    bad = {"vim": {**K8S["vim"], "name": "x", "type": "vmware"}}
    r = await api.c.post("/v1.0/vims.json", json=bad)
    assert r.status_code == 400 and "vmware" in r.json()["TackerError"]["message"]
    r = await api.c.put(f"/v1.0/vims/{vim['id']}.json", json={"vim": {"type": "openstack"}})
    assert r.status_code == 400

    # SOL003 spelling on input, the seeds' on output, and the secret kept for the drivers.
    r = await api.c.post("/v1.0/vims.json", json={"vim": {**K8S["vim"], "name": "k8s-2",
                                                          "type": "ETSINFV.KUBERNETES.V_1"}})
    assert r.status_code == 201 and r.json()["vim"]["type"] == "kubernetes"
    stored = api.core.vims.require(r.json()["vim"]["id"])
    assert stored.vim_type == "kubernetes" and stored.access_info["bearer_token"] == "t0ken-s3cret"
    assert (await api.c.delete(f"/v1.0/vims/{vim['id']}.json")).status_code == 204
    assert (await api.c.get(f"/v1.0/vims/{vim['id']}.json")).status_code == 404


async def test_vim_type_is_reported_in_the_seeds_spelling(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    body = seed_body()
    body["vimConnectionInfo"][0]["vimType"] = "ETSINFV.OPENSTACK_KEYSTONE.V_2"
    inst_id = await api.create_instance(vnfd_id)
    occ = await api.run(inst_id, "instantiate", body)
    inst = await api.instance(inst_id)
    types = sorted(c["vimType"] for c in inst["vimConnectionInfo"])
    # no OpenStack VIM is registered: it ran on the simulator, and says so; the cluster VIM is added
    assert types == ["kubernetes", "simulator"], inst["vimConnectionInfo"]
    assert occ["operationState"] == "COMPLETED"
    shown = (await api.c.get(f"/vnflcm/v1/vnf_lcm_op_occs/{occ['id']}")).json()
    assert any("(openstack)" in w for w in shown["vnfmWarnings"])
    for spelling in ("etsinfv.openstack_keystone.v_2", "OpenStack"):
        r = await api.c.patch(f"/vnflcm/v1/vnf_instances/{inst_id}", json={"vimConnectionInfo": [
            {"id": f"other-{spelling}", "vimId": "c3369b54-e376-4423-bb61-afd255900fea", "vimType": spelling}]})
        assert r.status_code == 202, r.text
        await api.wait_op(r.headers["Location"])
        conns = {c["id"]: c for c in (await api.instance(inst_id))["vimConnectionInfo"]}
        assert conns[f"other-{spelling}"]["vimType"] == "openstack"
