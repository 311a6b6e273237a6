"""One test per class of ETSI NFV-TST 010 (SOL003 / SOL005 v2.6.1) failure found in issue 11:
header spelling, SOL005 api_versions, absent attributes instead of null, selectors on
subscriptions, invalid attribute names, byte ranges, text/plain VNFD, and the instance's _links."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import httpx
import pytest

from vnfm.entrypoints.api.server import start_in_thread

from .conftest import Api, ApiFactory, csar_bytes, seed_body, settings_for
from .test_packages import assert_problem

SPEC_NAMES = {b"Content-Type", b"Location", b"Link", b"Version", b"WWW-Authenticate", b"Content-Range",
              b"Content-Length", b"Accept-Ranges", b"Allow", b"Date"}


def header_names(r: httpx.Response) -> set[bytes]:
    return {k for k, _ in r.headers.raw}


def assert_spelled_as_specified(r: httpx.Response, *must: bytes) -> None:
    names = header_names(r)
    for name in must:
        assert name in names, (name, r.headers.raw)
    lower_dupes = {n for n in names if n.lower() in {s.lower() for s in SPEC_NAMES} and n not in SPEC_NAMES}
    assert not lower_dupes, lower_dupes


def all_nulls(doc: Any, path: str = "") -> list[str]:
    if isinstance(doc, dict):
        return [p for k, v in doc.items() for p in ([f"{path}/{k}"] if v is None else all_nulls(v, f"{path}/{k}"))]
    if isinstance(doc, list):
        return [p for i, v in enumerate(doc) for p in all_nulls(v, f"{path}[{i}]")]
    return []


def resource_handles(doc: Any) -> Any:
    """Every ResourceHandle in an InstantiatedVnfInfo (the ETSI schemas require its vimConnectionId)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in ("resourceHandle", "computeResource", "networkResource", "storageResource"):
                yield value
            else:
                yield from resource_handles(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from resource_handles(item)


# ------------------------------------------------------------------------------------ headers
async def test_header_names_are_spelled_as_the_specifications_write_them(api_factory: ApiFactory) -> None:
    api = await api_factory(page_size=1)
    r = await api.c.post("/vnfpkgm/v1/vnf_packages", json={})
    assert_spelled_as_specified(r, b"Location", b"Content-Type", b"Version")
    await api.c.post("/vnfpkgm/v1/vnf_packages", json={})
    r = await api.c.get("/vnfpkgm/v1/vnf_packages")
    assert_spelled_as_specified(r, b"Link", b"Content-Type", b"Version")
    r = await api.c.get("/vnflcm/v1/vnf_instances/nope")
    assert r.status_code == 404
    assert_spelled_as_specified(r, b"Content-Type", b"Version")
    r = await api.c.put("/vnflcm/v1/api_versions")
    assert r.status_code == 405
    assert_spelled_as_specified(r, b"Allow", b"Version")

    locked = await api_factory(auth_token="t0ken")
    r = await locked.c.get("/vnflcm/v1/vnf_instances")
    assert r.status_code == 401
    assert_spelled_as_specified(r, b"WWW-Authenticate", b"Version", b"Content-Type")


async def test_an_unexpected_error_carries_the_headers_too(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> list[Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(api.core.instances, "page", boom)
    transport = httpx.ASGITransport(app=api.app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://vnfm.test") as c:
        r = await c.get("/vnflcm/v1/vnf_instances")
    assert r.status_code == 500 and r.json()["status"] == 500
    assert_spelled_as_specified(r, b"Content-Type", b"Version")


def test_header_names_on_the_wire_through_uvicorn(tmp_path: Any) -> None:
    """The real server (uvicorn): a created resource, a file download and an error."""
    handle = start_in_thread(settings_for(tmp_path, host="127.0.0.1", port=0))
    try:
        with httpx.Client(base_url=handle.url) as c:
            r = c.post("/vnfpkgm/v1/vnf_packages", json={})
            assert_spelled_as_specified(r, b"Location", b"Content-Type", b"Version", b"Date")
            pkg = r.json()["id"]
            r = c.put(f"/vnfpkgm/v1/vnf_packages/{pkg}/package_content", content=csar_bytes(),
                      headers={"Content-Type": "application/zip"})
            assert r.status_code == 202, r.text
            r = c.get(f"/vnfpkgm/v1/vnf_packages/{pkg}/package_content", headers={"Range": "bytes=0-3"})
            assert r.status_code == 206 and r.content == b"PK\x03\x04"
            assert_spelled_as_specified(r, b"Content-Type", b"Content-Range", b"Content-Length", b"Version")
            r = c.get("/vnfpkgm/v1/vnf_packages/nope")
            assert_spelled_as_specified(r, b"Content-Type", b"Version")
            assert not {k for k in header_names(r) if k.islower()}, r.headers.raw
    finally:
        handle.stop()


# ------------------------------------------------------------------------------------ api_versions
async def test_vnfpkgm_api_versions(api: Api) -> None:
    # The ETSI suites join apiRoot "/" and "/vnfpkgm": the path starts with "//".
    assert (await api.c.get(httpx.URL("http://vnfm.test//vnfpkgm/v1//api_versions"))).status_code == 200
    for path in ("/vnfpkgm/api_versions", "/vnfpkgm/v1/api_versions"):
        r = await api.c.get(path)
        assert r.status_code == 200, path
        assert r.json() == {"uriPrefix": "/vnfpkgm/v1", "apiVersions": [{"version": "2.6.1", "isDeprecated": False}]}
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert_problem(await api.c.request(method, path), 405)


# ------------------------------------------------------------------------------------ no nulls
async def test_absent_optional_attributes_are_omitted_not_null(api: Api) -> None:
    pkg_id = await api.create_package()
    created = (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()
    assert not all_nulls(created)
    # SOL005 9.5.2.5: not present before the content is on-boarded.
    assert not {"softwareImages", "additionalArtifacts", "checksum", "vnfdId"} & set(created)
    assert "vnfd" not in created["_links"]
    assert (await api.upload(pkg_id)).status_code == 202
    pkg = (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()
    assert not all_nulls(pkg) and "vnfd" in pkg["_links"]

    r = await api.c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": pkg["vnfdId"]})  # no description
    inst_id = r.json()["id"]
    assert not all_nulls(r.json()) and "vnfInstanceDescription" not in r.json()
    occ = await api.run(inst_id, "instantiate", seed_body())  # no instantiationLevelId, no grant
    assert not all_nulls(occ), all_nulls(occ)
    inst = await api.instance(inst_id)
    assert not all_nulls(inst), all_nulls(inst)
    assert "instantiationLevelId" not in inst["instantiatedVnfInfo"]
    handles = list(resource_handles(inst["instantiatedVnfInfo"]))
    assert len(handles) > 5 and all(h.get("vimConnectionId") for h in handles), handles  # ResourceHandle
    for path in ("/vnflcm/v1/vnf_instances?all_fields", "/vnflcm/v1/vnf_lcm_op_occs?all_fields"):
        assert not all_nulls((await api.c.get(path)).json()), path

    r = await api.c.post("/vnflcm/v1/subscriptions", json={"callbackUri": "http://127.0.0.1:9/cb"})
    assert r.status_code == 201, r.text
    assert "filter" not in r.json() and not all_nulls(r.json())


# ------------------------------------------------------------------------------------ selectors
async def test_subscriptions_take_attribute_selectors(api: Api) -> None:
    for path in ("/vnflcm/v1/subscriptions", "/vnfpkgm/v1/subscriptions"):
        r = await api.c.post(path, json={"callbackUri": "http://127.0.0.1:9/cb", "filter": {}})
        assert r.status_code == 201, r.text
        for query in ("all_fields", "exclude_default", "fields=callbackUri", "exclude_fields=callbackUri",
                      "exclude_default&fields=_links"):
            r = await api.c.get(f"{path}?{query}")
            assert r.status_code == 200, (path, query, r.text)
            assert len(r.json()) == 1
        assert "callbackUri" not in (await api.c.get(f"{path}?exclude_fields=callbackUri")).json()[0]
        assert_problem(await api.c.get(f"{path}?fields=nope"), 400, "nope")


async def test_invalid_attribute_names_in_selectors_and_filters_are_400(api: Api) -> None:
    assert_problem(await api.c.get("/vnflcm/v1/vnf_lcm_op_occs?fields=wrong_field"), 400, "wrong_field")
    assert_problem(await api.c.get("/vnflcm/v1/vnf_lcm_op_occs?exclude_fields=wrong_field"), 400, "wrong_field")
    assert_problem(await api.c.get("/vnflcm/v1/vnf_lcm_op_occs?filter=(eq,wrong_field,1)"), 400, "wrong_field")
    assert_problem(await api.c.get("/vnflcm/v1/vnf_lcm_op_occs?attribute_not_exist=x"), 400)
    assert_problem(await api.c.get("/vnflcm/v1/vnf_instances?fields=nope/x"), 400, "nope")
    assert_problem(await api.c.get("/vnfpkgm/v1/vnf_packages?filter=(eq,nope,1)"), 400, "nope")
    # Nested paths under a real attribute stay allowed.
    r = await api.c.get("/vnflcm/v1/vnf_instances?fields=instantiatedVnfInfo/vnfState")
    assert r.status_code == 200, r.text


# ------------------------------------------------------------------------------------ ranges
async def test_byte_ranges_on_package_content_and_artifacts(onboarded: tuple[Api, str, str]) -> None:
    api, pkg_id, _ = onboarded
    url = f"/vnfpkgm/v1/vnf_packages/{pkg_id}"
    data = csar_bytes()
    size = len(data)
    r = await api.c.get(f"{url}/package_content", headers={"Range": "bytes=10-19"})
    assert r.status_code == 206 and r.content == data[10:20]
    assert r.headers["Content-Range"] == f"bytes 10-19/{size}"
    r = await api.c.get(f"{url}/package_content", headers={"Range": "bytes=-5"})
    assert r.status_code == 206 and r.content == data[-5:]
    for unsatisfiable in (f"bytes={size}-", f"bytes={size + 10}-{size + 20}", "bytes=-0"):
        r = await api.c.get(f"{url}/package_content", headers={"Range": unsatisfiable})
        assert_problem(r, 416)
        assert r.headers["Content-Range"] == f"bytes */{size}"
    r = await api.c.get(f"{url}/package_content", headers={"Range": "bytes=0-1,5-6"})  # several: ignored
    assert r.status_code == 200 and r.content == data

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        script = zf.read("Scripts/install_k8s_cluster.sh")
    art = f"{url}/artifacts/Scripts/install_k8s_cluster.sh"
    r = await api.c.get(art, headers={"Range": "bytes=0-1"})
    assert r.status_code == 206 and r.content == script[:2]
    r = await api.c.get(art, headers={"Range": f"bytes={len(script)}-"})
    assert_problem(r, 416)
    assert r.headers["Content-Range"] == f"bytes */{len(script)}"


# ------------------------------------------------------------------------------------ vnfd
async def test_text_plain_vnfd_of_several_files_is_406(onboarded: tuple[Api, str, str]) -> None:
    api, pkg_id, _ = onboarded
    r = await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}/vnfd", headers={"Accept": "text/plain"})
    assert_problem(r, 406, "application/zip")
    r = await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}/vnfd",
                        headers={"Accept": "text/plain, application/zip"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/zip"


# ------------------------------------------------------------------------------------ _links
async def test_instance_links_advertise_only_implemented_tasks(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    inst_id = await api.create_instance(vnfd_id)
    links = (await api.instance(inst_id))["_links"]
    assert set(links) == {"self", "instantiate"}
    await api.run(inst_id, "instantiate", seed_body())
    links = (await api.instance(inst_id))["_links"]
    assert set(links) == {"self", "terminate", "scale", "heal"}
    assert not {"scaleToLevel", "changeExtConn", "changeFlavour", "operate"} & set(links)
    for name, link in links.items():
        if name == "self":
            continue
        r = await api.c.post(link["href"], json={"unknownAttribute": 1})  # refused, but routed
        assert r.status_code == 400, (name, r.status_code, r.text)


def test_lcm_notifications_carry_no_nulls_and_no_url_credentials() -> None:
    """A RESULT for a scale-out whose new VNFC never got a server (resourceId unknown)."""
    from vnfm.domain.model import LcmOperation, OpOcc, OpState
    from vnfm.service import views

    occ = OpOcc(vnf_instance_id="i", operation=LcmOperation.SCALE, operation_state=OpState.FAILED_TEMP,
                error={"status": 500, "title": "x", "detail": "proxy http://u:n0tif-s3cret@p:3128 refused"},
                resource_changes={"affectedVnfcs": [{"id": "v", "vduId": "w", "changeType": "ADDED",
                                                     "computeResource": {"vimConnectionId": "vim",
                                                                         "resourceId": None}}]},
                changed_info={"metadata": {"mirror": "https://u:n0tif-s3cret@m/"}})
    body = views.lcm_notification(occ, "RESULT")
    assert not all_nulls(body), all_nulls(body)
    assert "n0tif-s3cret" not in str(body)
    assert body["affectedVnfcs"][0]["computeResource"] == {"vimConnectionId": "vim"}
