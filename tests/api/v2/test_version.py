"""/vnflcm/v2: api_versions, the SOL013 v3 Version header, lists (filters, selectors, paging)."""

from __future__ import annotations

from typing import Any

from ..conftest import Api
from . import schemas as s
from .conftest import V2, VERSION, V2Api, check, problem


async def test_api_versions_need_no_version_header(api: Api) -> None:
    r = await api.c.get(f"{V2}/api_versions")
    assert r.status_code == 200 and r.headers["Version"] == "2.0.0"
    assert check(s.ApiVersionInformation, r.json()) == {
        "uriPrefix": "/vnflcm/v2", "apiVersions": [{"version": "2.0.0", "isDeprecated": False}]}
    # the API name's own api_versions lists both major versions (the stock client's `vnflcm versions`)
    r = await api.c.get("/vnflcm/api_versions", headers=VERSION)
    assert r.status_code == 200
    body = check(s.ApiVersionInformation, r.json())
    assert body["uriPrefix"] == "/vnflcm"
    assert [v["version"] for v in body["apiVersions"]] == ["2.6.1", "2.0.0"]


async def test_the_version_header_is_required_and_checked(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    url = f"{V2}/vnf_instances"
    problem(await api.c.get(url), 400, "'Version' HTTP header missing")
    problem(await api.c.post(url, json={"vnfdId": vnfd_id}), 400, "Version")
    problem(await api.c.get(url, headers={"Version": "2.0"}), 400, "Major.Minor.Patch")
    problem(await api.c.get(url, headers={"Version": "2.0.0-beta"}), 400, "Major.Minor.Patch")
    problem(await api.c.get(url, headers={"Version": "1.3.0"}), 406, "1.3.0", "2.0.0")
    problem(await api.c.get(f"{V2}/vnf_lcm_op_occs", headers={"Version": "3.0.0"}), 406)
    problem(await api.c.get(f"{V2}/subscriptions"), 400, "Version")
    r = await api.c.get(url, headers={"Version": "2.0.0-impl:example.com:vnfm:1"})
    assert r.status_code == 200 and r.json() == []
    # nothing was created by the refused POST
    assert (await api.c.get("/vnflcm/v1/vnf_instances")).json() == []
    # v1 keeps its own Version
    assert (await api.c.get("/vnflcm/v1/vnf_instances")).headers["Version"] == "2.6.1"


async def test_lists_filter_select_and_page(api_factory: Any) -> None:
    api = await api_factory(page_size=2)
    _, vnfd_id = await api.onboard()
    v2 = V2Api(api, vnfd_id)
    try:
        ids = [(await v2.create(vnfInstanceName=f"v2-{i}"))["id"] for i in range(3)]
        r = await v2.c.get(f"{V2}/vnf_instances")
        page1 = r.json()
        assert len(page1) == 2 and 'rel="next"' in r.headers["Link"]
        r2 = await v2.c.get(r.links["next"]["url"])
        assert "nextpage_opaque_marker=" in r.links["next"]["url"] and "Link" not in r2.headers
        assert [i["id"] for i in page1 + r2.json()] == ids
        for doc in page1 + r2.json():
            check(s.VnfInstance, doc)
            assert "vimConnectionInfo" not in doc and "vnfPkgId" not in doc  # default excluded / not v3.3.1
        r = await v2.c.get(f"{V2}/vnf_instances", params={"filter": "(eq,vnfInstanceName,v2-1)",
                                                         "exclude_fields": "vnfProvider,vnfProductName"})
        assert [(d["id"], d["vnfInstanceName"]) for d in r.json()] == [(ids[1], "v2-1")]
        assert {"vnfProvider", "vnfProductName", "vnfPkgId"}.isdisjoint(r.json()[0]) and "vnfdId" in r.json()[0]
        # vnfPkgId is v2.6.1's: not an attribute of the v3.3.1 VnfInstance
        problem(await v2.c.get(f"{V2}/vnf_instances", params={"filter": "(eq,vnfPkgId,x)"}), 400, "vnfPkgId")
        problem(await v2.c.get(f"{V2}/vnf_instances", params={"all_fields": "", "fields": "id"}), 400)
        r = await v2.c.get(f"{V2}/vnf_lcm_op_occs", params={"filter": "(eq,operation,CHANGE_VNFPKG)"})
        assert r.status_code == 200 and r.json() == []
        problem(await v2.c.get(f"{V2}/vnf_lcm_op_occs", params={"filter": "(eq,nope,1)"}), 400, "nope")
    finally:
        await v2.c.aclose()
