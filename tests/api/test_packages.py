"""SOL005 v2.6.1 VNF package management over HTTP: /vnfpkgm/v1."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import httpx

from .conftest import Api, csar_bytes

PKGS = "/vnfpkgm/v1/vnf_packages"
PROBLEM = "application/problem+json"


def assert_problem(r: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM), r.headers
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"] and body["detail"]
    for w in words:
        assert w.lower() in body["detail"].lower(), body["detail"]
    return body


async def test_create_upload_show(api: Api) -> None:
    r = await api.c.post(PKGS, json={"userDefinedData": {"owner": "team-a"}})
    assert r.status_code == 201
    pkg = r.json()
    assert r.headers["Location"].endswith(f"{PKGS}/{pkg['id']}")
    assert pkg["onboardingState"] == "CREATED"
    assert pkg["operationalState"] == "DISABLED"
    assert pkg["usageState"] == "NOT_IN_USE"
    assert pkg["userDefinedData"] == {"owner": "team-a"}
    assert pkg["_links"]["self"]["href"] == f"{PKGS}/{pkg['id']}"

    # Content is not there yet: 409 for the content and the VNFD.
    assert_problem(await api.c.get(f"{PKGS}/{pkg['id']}/package_content"), 409)

    r = await api.upload(pkg["id"])
    assert r.status_code == 202, r.text
    r = await api.c.get(r.request.url.path.rsplit("/", 1)[0])
    info = r.json()
    assert info["onboardingState"] == "ONBOARDED"
    assert info["operationalState"] == "ENABLED"
    assert info["usageState"] == "NOT_IN_USE"
    assert info["vnfdId"] and info["vnfProvider"] and info["vnfProductName"]
    assert info["checksum"]["algorithm"] == "SHA-512"
    assert {a["artifactPath"] for a in info["additionalArtifacts"]} >= {"Scripts/install_k8s_cluster.sh"}
    assert {i["id"] for i in info["softwareImages"]} >= {"masterNode", "workerNode"}

    # Uploading again to an ONBOARDED package is a conflict.
    assert_problem(await api.upload(pkg["id"]), 409, "CREATED")


async def test_create_rejects_unknown_attribute_and_bad_json(api: Api) -> None:
    assert_problem(await api.c.post(PKGS, json={"bogusAttr": 1}), 400, "bogusAttr")
    r = await api.c.post(PKGS, content=b'{"userDefinedData": ', headers={"Content-Type": "application/json"})
    assert_problem(r, 400, "malformed JSON")


async def test_list_filter_and_selectors(api: Api) -> None:
    onboarded_id, vnfd_id = await api.onboard()
    created_id = await api.create_package({"userDefinedData": {"k": "v"}})

    r = await api.c.get(PKGS)
    assert r.status_code == 200
    docs = {d["id"]: d for d in r.json()}
    assert set(docs) == {onboarded_id, created_id}
    # Default: complex attributes are excluded.
    for d in docs.values():
        for key in ("softwareImages", "additionalArtifacts", "userDefinedData", "checksum"):
            assert key not in d, key

    r = await api.c.get(PKGS, params={"filter": "(eq,onboardingState,ONBOARDED)"})
    assert [d["id"] for d in r.json()] == [onboarded_id]
    r = await api.c.get(PKGS, params={"filter": f"(eq,vnfdId,{vnfd_id});(eq,operationalState,DISABLED)"})
    assert r.json() == []
    r = await api.c.get(PKGS, params={"filter": "(neq,onboardingState,ONBOARDED)"})
    assert [d["id"] for d in r.json()] == [created_id]
    r = await api.c.get(PKGS, params={"filter": "(eq,userDefinedData/k,v)"})
    assert [d["id"] for d in r.json()] == [created_id]

    r = await api.c.get(PKGS, params={"all_fields": ""})
    full = {d["id"]: d for d in r.json()}
    assert full[onboarded_id]["softwareImages"] and full[onboarded_id]["checksum"]

    r = await api.c.get(PKGS, params={"fields": "softwareImages", "filter": f"(eq,id,{onboarded_id})"})
    (doc,) = r.json()
    assert doc["softwareImages"] and "additionalArtifacts" not in doc

    r = await api.c.get(PKGS, params={"exclude_default": ""})
    assert all("softwareImages" not in d for d in r.json())

    r = await api.c.get(PKGS, params={"exclude_fields": "_links,usageState"})
    for d in r.json():
        assert "_links" not in d and "usageState" not in d
        assert "userDefinedData" in d  # exclude_fields replaces the default exclusion

    assert_problem(await api.c.get(PKGS, params={"filter": "(eq,onboardingState"}), 400)
    assert_problem(await api.c.get(PKGS, params={"all_fields": "", "fields": "checksum"}), 400)
    assert_problem(await api.c.get(PKGS, params={"bogus": "1"}), 400, "bogus")


async def test_enable_disable_merge_patch(api: Api) -> None:
    pkg_id, _ = await api.onboard()
    patch_headers = {"Content-Type": "application/merge-patch+json"}
    url = f"{PKGS}/{pkg_id}"

    r = await api.c.patch(url, content=b'{"operationalState": "ENABLED"}', headers=patch_headers)
    assert_problem(r, 409, "already ENABLED")

    r = await api.c.patch(url, content=b'{"operationalState": "DISABLED"}', headers=patch_headers)
    assert r.status_code == 200, r.text
    assert r.json() == {"operationalState": "DISABLED"}
    assert (await api.c.get(url)).json()["operationalState"] == "DISABLED"

    r = await api.c.patch(url, content=b'{"operationalState": "DISABLED"}', headers=patch_headers)
    assert_problem(r, 409, "already DISABLED")

    r = await api.c.patch(url, content=b'{"userDefinedData": {"a": "1", "b": "2"}}', headers=patch_headers)
    assert r.status_code == 200
    r = await api.c.patch(url, content=b'{"userDefinedData": {"a": null}}', headers=patch_headers)
    assert r.status_code == 200
    assert (await api.c.get(url, params={})).json()["userDefinedData"] == {"b": "2"}

    r = await api.c.patch(url, content=b'{"operationalState": "ENABLED"}', headers=patch_headers)
    assert r.status_code == 200
    assert (await api.c.get(url)).json()["operationalState"] == "ENABLED"

    assert_problem(await api.c.patch(url, json={"onboardingState": "CREATED"}), 400, "onboardingState")
    assert_problem(await api.c.patch(url, json={"operationalState": "SLEEPING"}), 400, "operationalState")

    # A package that is not onboarded cannot be enabled or disabled.
    fresh = await api.create_package()
    r = await api.c.patch(f"{PKGS}/{fresh}", content=b'{"operationalState": "ENABLED"}', headers=patch_headers)
    assert_problem(r, 409, "ONBOARDED")


async def test_vnfd_artifacts_and_content(api: Api) -> None:
    pkg_id, _ = await api.onboard()
    url = f"{PKGS}/{pkg_id}"

    r = await api.c.get(f"{url}/package_content")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/zip"
    assert r.content == csar_bytes()

    r = await api.c.get(f"{url}/vnfd", headers={"Accept": "application/zip"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(r.content)) as zf:
        names = set(zf.namelist())
    assert "TOSCA-Metadata/TOSCA.meta" in names
    assert "Definitions/sample_kubernetes_top.vnfd.yaml" in names
    assert "Definitions/sample_kubernetes_df_simple.yaml" in names
    assert not any(n.startswith(("Scripts/", "BaseHOT/")) for n in names)

    # The VNFD has several files: text/plain alone cannot carry it (SOL005 9.4.4.3.2: 406).
    assert_problem(await api.c.get(f"{url}/vnfd", headers={"Accept": "text/plain"}), 406, "application/zip")
    assert_problem(await api.c.get(f"{url}/vnfd", headers={"Accept": "image/png"}), 406)

    r = await api.c.get(f"{url}/artifacts/Scripts/install_k8s_cluster.sh")
    assert r.status_code == 200
    with zipfile.ZipFile(io.BytesIO(csar_bytes())) as zf:
        assert r.content == zf.read("Scripts/install_k8s_cluster.sh")
    assert_problem(await api.c.get(f"{url}/artifacts/Scripts/nope.sh"), 404, "Scripts/nope.sh")


async def test_delete_rules(api: Api) -> None:
    pkg_id, vnfd_id = await api.onboard()
    url = f"{PKGS}/{pkg_id}"
    assert_problem(await api.c.delete(url), 409, "ENABLED")

    # In use by an instance: still not deletable after disabling.
    inst_id = await api.create_instance(vnfd_id)
    assert (await api.c.get(url)).json()["usageState"] == "IN_USE"
    assert (await api.c.patch(url, json={"operationalState": "DISABLED"})).status_code == 200
    # A DISABLED package cannot be used for new instances.
    r = await api.c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id})
    assert_problem(r, 409, "DISABLED")
    assert_problem(await api.c.delete(url), 409, "IN_USE")

    assert (await api.c.delete(f"/vnflcm/v1/vnf_instances/{inst_id}")).status_code == 204
    assert (await api.c.get(url)).json()["usageState"] == "NOT_IN_USE"
    r = await api.c.delete(url)
    assert r.status_code == 204 and r.content == b""
    assert_problem(await api.c.get(url), 404, pkg_id)
    assert_problem(await api.c.delete(url), 404)

    # A CREATED package (DISABLED, never onboarded) can be deleted directly.
    fresh = await api.create_package()
    assert (await api.c.delete(f"{PKGS}/{fresh}")).status_code == 204


async def test_unknown_package_is_404_problem(api: Api) -> None:
    missing = "00000000-0000-0000-0000-000000000000"
    for method, path in (("GET", ""), ("GET", "/vnfd"), ("GET", "/package_content"), ("DELETE", ""),
                         ("GET", "/artifacts/Scripts/x.sh")):
        assert_problem(await api.c.request(method, f"{PKGS}/{missing}{path}"), 404)
    r = await api.c.put(f"{PKGS}/{missing}/package_content", content=csar_bytes(),
                        headers={"Content-Type": "application/zip"})
    assert_problem(r, 404, missing)
    assert_problem(await api.c.patch(f"{PKGS}/{missing}", json={"operationalState": "DISABLED"}), 404)


async def test_api_versions(api: Api) -> None:
    r = await api.c.get("/vnfpkgm/v1/api_versions")
    assert r.status_code == 200
    assert r.json()["apiVersions"][0]["version"] == "2.6.1"


async def test_lists_are_paged_with_link_headers(api_factory: Any) -> None:
    """SOL013 5.4.2: past page_size, a list answers one page and Link: <...>; rel="next"."""
    api = await api_factory(page_size=3)
    ids = [await api.create_package({"userDefinedData": {"n": str(i)}}) for i in range(7)]
    seen: list[str] = []
    url: str | None = PKGS + "?filter=(eq,onboardingState,CREATED)&fields=userDefinedData"
    pages = 0
    while url:
        r = await api.c.get(url)
        assert r.status_code == 200, r.text
        pages += 1
        assert len(r.json()) <= 3 and all("userDefinedData" in p for p in r.json())  # query kept
        seen += [p["id"] for p in r.json()]
        link = r.headers.get("Link")
        url = link[link.index("<") + 1:link.index(">")] if link else None
        if link:
            assert link.endswith('; rel="next"') and "filter=" in link and "nextpage_opaque_marker=" in link
    assert pages == 3 and seen == ids  # every package once, in creation order
    # a filter that selects fewer than a page: no Link
    r = await api.c.get(PKGS, params={"filter": f"(eq,id,{ids[0]})"})
    assert [p["id"] for p in r.json()] == [ids[0]] and "Link" not in r.headers
    # markers are the server's own; one whose item is gone says to start again
    assert_problem(await api.c.get(PKGS, params={"nextpage_opaque_marker": "%%%"}), 400, "marker")
    first = await api.c.get(PKGS)
    marker = first.headers["Link"].split("nextpage_opaque_marker=")[1].split(">")[0]
    assert (await api.c.delete(f"{PKGS}/{ids[2]}")).status_code == 204
    assert_problem(await api.c.get(PKGS, params={"nextpage_opaque_marker": marker}), 400, "start")
