"""Issue 21 item 6, the HTTP contract: ETags on individual resources and If-Match on PATCH (SOL003
v2.6.1 5.4.3.3.4, RFC 9110), ProblemDetails by content negotiation, 406 for an Accept the server
cannot produce, 415 for a request Content-Type it does not take, and a ProblemDetails for each LCM
task vnfm does not implement."""

from __future__ import annotations

import pytest

from .conftest import Api, csar_bytes
from .test_packages import PROBLEM, assert_problem

INSTANCES = "/vnflcm/v1/vnf_instances"
PACKAGES = "/vnfpkgm/v1/vnf_packages"


async def test_individual_resources_have_etags(onboarded: tuple[Api, str, str]) -> None:
    api, pkg_id, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.patch(f"{INSTANCES}/{inst_id}", json={"vnfInstanceName": "a"})
    occ = await api.wait_op(r.headers["Location"])
    vim_id = (await api.c.get("/vnfm/v1/vims")).json()[0]["id"]
    for path in (f"{INSTANCES}/{inst_id}", f"/vnflcm/v1/vnf_lcm_op_occs/{occ['id']}", f"{PACKAGES}/{pkg_id}",
                 f"/vnfm/v1/vims/{vim_id}"):
        r = await api.c.get(path)
        assert r.status_code == 200, r.text
        tag = r.headers["ETag"]
        assert tag.startswith('"') and tag.endswith('"') and len(tag) > 10
        assert (await api.c.get(path)).headers["ETag"] == tag  # the same representation, the same tag
        r = await api.c.get(path, headers={"If-None-Match": tag})
        assert r.status_code == 304 and r.content == b"" and r.headers["ETag"] == tag
        assert (await api.c.get(path, headers={"If-None-Match": '"other"'})).status_code == 200
    lists = await api.c.get(INSTANCES)
    assert "etag" not in lists.headers  # a collection is not an individual resource


async def test_patch_with_a_stale_if_match_is_412_and_changes_nothing(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id, vnfInstanceName="before")
    path = f"{INSTANCES}/{inst_id}"
    tag = (await api.c.get(path)).headers["ETag"]
    r = await api.c.patch(path, json={"vnfInstanceDescription": "x"}, headers={"If-Match": tag})
    assert r.status_code == 202, r.text
    await api.wait_op(r.headers["Location"])
    ops = (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json()
    shown = await api.c.get(path)
    assert shown.headers["ETag"] != tag  # the description changed: so did the tag
    for stale in (tag, f"W/{shown.headers['ETag']}", '"nope"'):
        r = await api.c.patch(path, json={"vnfInstanceName": "after"}, headers={"If-Match": stale})
        body = assert_problem(r, 412, "If-Match", "nothing was modified")
        assert body["title"] == "Precondition Failed"
    assert (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == ops  # no occurrence started
    assert (await api.instance(inst_id))["vnfInstanceName"] == "before"
    for n, form in enumerate(("{tag}", '"nope", {tag}', "*")):
        current = (await api.c.get(path)).headers["ETag"]
        r = await api.c.patch(path, json={"vnfInstanceName": f"after-{n}"},
                              headers={"If-Match": form.format(tag=current)})
        assert r.status_code == 202, r.text
        await api.wait_op(r.headers["Location"])
        assert (await api.instance(inst_id))["vnfInstanceName"] == f"after-{n}"


async def test_package_patch_honours_if_match(onboarded: tuple[Api, str, str]) -> None:
    api, pkg_id, _ = onboarded
    path = f"{PACKAGES}/{pkg_id}"
    tag = (await api.c.get(path)).headers["ETag"]
    r = await api.c.patch(path, json={"userDefinedData": {"k": "v"}}, headers={"If-Match": '"stale"'})
    assert_problem(r, 412)
    assert (await api.c.get(path)).json().get("userDefinedData", {}).get("k") is None
    r = await api.c.patch(path, json={"userDefinedData": {"k": "v"}}, headers={"If-Match": tag})
    assert r.status_code == 200, r.text
    assert (await api.c.get(path)).json()["userDefinedData"]["k"] == "v"


@pytest.mark.parametrize(("accept", "media"), [
    (None, PROBLEM),
    ("application/problem+json", PROBLEM),
    ("application/json", "application/json"),  # the ETSI NFV-TST 010 suites' Accept
    ("application/json;q=0.9, application/problem+json", PROBLEM),
    ("application/problem+json;q=0, application/json", "application/json"),
    ("*/*", PROBLEM),
])
async def test_problem_details_follow_content_negotiation(api: Api, accept: str | None, media: str) -> None:
    headers = {"Accept": accept} if accept else {}
    for r in (await api.c.get(f"{INSTANCES}/nope", headers=headers),  # a service error (404)
              await api.c.post(INSTANCES, json={}, headers=headers),  # a validation error (400)
              await api.c.delete("/vnflcm/v1/api_versions", headers=headers)):  # a routing error (405)
        assert r.headers["Content-Type"].split(";")[0] == media, (accept, r.headers)
        body = r.json()
        assert body["status"] == r.status_code and body["detail"]


async def test_an_accept_the_server_cannot_produce_is_406_before_anything_happens(
        onboarded: tuple[Api, str, str]) -> None:
    api, pkg_id, vnfd_id = onboarded
    r = await api.c.post(INSTANCES, json={"vnfdId": vnfd_id}, headers={"Accept": "text/html"})
    assert_problem(r, 406, "text/html", "application/json")
    assert (await api.c.get(INSTANCES)).json() == []  # nothing was created
    assert_problem(await api.c.get(INSTANCES, headers={"Accept": "application/json;q=0"}), 406)
    r = await api.c.get(f"{PACKAGES}/{pkg_id}/package_content", headers={"Accept": "application/json"})
    assert r.status_code == 406 and r.headers["Content-Type"] == "application/json"  # as the client accepts
    assert "application/zip" in r.json()["detail"]
    r = await api.c.get(f"{PACKAGES}/{pkg_id}/package_content", headers={"Accept": "application/zip"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/zip"
    r = await api.c.get(f"{PACKAGES}/{pkg_id}/vnfd", headers={"Accept": "application/zip, text/plain"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/zip"
    for accept in ("application/*", "*/*", "text/html, application/json;q=0.1"):
        assert (await api.c.get(INSTANCES, headers={"Accept": accept})).status_code == 200


async def test_an_unsupported_content_type_is_415(api: Api) -> None:
    vnfd_id = "5f2a9c1e-7b3d-4e8a-9c6f-1d2e3f4a5b6c"
    for ctype in ("application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        r = await api.c.post(INSTANCES, content=b'{"vnfdId": "%s"}' % vnfd_id.encode(), headers={"Content-Type": ctype})
        assert_problem(r, 415, "application/json")
    assert (await api.c.get(INSTANCES)).json() == []
    pkg_id = await api.create_package()
    r = await api.c.put(f"{PACKAGES}/{pkg_id}/package_content", content=csar_bytes(),
                        headers={"Content-Type": "application/json"})
    assert_problem(r, 415, "application/zip")
    assert (await api.c.get(f"{PACKAGES}/{pkg_id}")).json()["onboardingState"] == "CREATED"
    r = await api.c.put(f"{PACKAGES}/{pkg_id}/package_content", content=csar_bytes(),
                        headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 202, r.text


@pytest.mark.parametrize(("task", "operation"), [
    ("scale_to_level", "SCALE_TO_LEVEL"), ("change_flavour", "CHANGE_FLAVOUR"), ("operate", "OPERATE"),
    ("change_ext_conn", "CHANGE_EXT_CONN"),
])
async def test_an_lcm_task_vnfm_does_not_implement_says_so(onboarded: tuple[Api, str, str], task: str,
                                                            operation: str) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.post(f"{INSTANCES}/{inst_id}/{task}", json={})
    body = assert_problem(r, 404, operation, "not implemented by vnfm")
    assert body["operation"] == operation
    assert_problem(await api.c.post(f"{INSTANCES}/nope/{task}", json={}), 404, "nope")
    assert (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == []


async def test_change_vnfpkg_is_routed_and_refuses_an_unknown_package(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id)
    r = await api.c.post(f"{INSTANCES}/{inst_id}/change_vnfpkg", json={"vnfdId": vnfd_id})
    assert_problem(r, 409, "NOT_INSTANTIATED")
    assert_problem(await api.c.post(f"{INSTANCES}/{inst_id}/change_vnfpkg", json={"vnfdId": 3}), 400, "vnfdId")
    assert (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json() == []


@pytest.mark.parametrize(("accept", "media", "q"), [
    ("application/json", "application/json", 1.0),
    ("application/*;q=0, application/json;q=0.4", "application/json", 0.4),  # the most specific range decides
    ("application/*;q=0", "application/json", 0.0),
    ("*/*;q=0.1, text/html", "application/json", 0.1),
    ("text/html", "application/json", 0.0),
    ("APPLICATION/JSON ; Q=0.5", "application/json", 0.5),
    ("application/json;q=bad", "application/json", 0.0),
    ("", "application/json", 0.0),
])
def test_accept_ranges(accept: str, media: str, q: float) -> None:
    from vnfm.entrypoints.api.negotiation import accepted_ranges, quality

    assert quality(media, accepted_ranges(accept)) == q
