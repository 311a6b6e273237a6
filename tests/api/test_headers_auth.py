"""SOL013 headers (Version), the api_versions resources, and the optional X-Auth-Token check."""

from __future__ import annotations

from .conftest import Api, ApiFactory
from .test_packages import assert_problem


async def test_api_versions_and_version_header(api: Api) -> None:
    r = await api.c.get("/vnflcm/v1/api_versions")
    assert r.status_code == 200
    assert r.json() == {"uriPrefix": "/vnflcm/v1", "apiVersions": [{"version": "2.6.1", "isDeprecated": False}]}
    assert r.headers["Version"] == "2.6.1"
    r = await api.c.get("/vnflcm/api_versions")  # both major versions (/vnflcm/v2: tests/api/v2)
    assert r.status_code == 200 and r.json()["uriPrefix"] == "/vnflcm"
    assert [v["version"] for v in r.json()["apiVersions"]] == ["2.6.1", "2.0.0"]
    # Every answer carries the Version header, errors included.
    r = await api.c.get("/vnflcm/v1/vnf_instances")
    assert r.status_code == 200 and r.headers["Version"] == "2.6.1"
    r = await api.c.get("/vnflcm/v1/vnf_instances/nope")
    assert r.status_code == 404 and r.headers["Version"] == "2.6.1"


async def test_tackerclient_style_headers_are_accepted(api: Api) -> None:
    """python-tackerclient sends Version: 1.3.0 and an X-Auth-Token; the ETSI suites send neither."""
    headers = {"Version": "1.3.0", "X-Auth-Token": "whatever-keystone-gave-me", "Accept": "application/json"}
    r = await api.c.post("/vnfpkgm/v1/vnf_packages", json={}, headers=headers)
    assert r.status_code == 201, r.text
    r = await api.c.get("/vnfpkgm/v1/vnf_packages", headers=headers)
    assert r.status_code == 200 and len(r.json()) == 1
    r = await api.c.get("/vnflcm/v1/vnf_instances", headers=headers)
    assert r.status_code == 200 and r.json() == []


async def test_auth_token_is_enforced_when_configured(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_token="t0ken-for-tests")
    r = await api.c.get("/vnflcm/v1/vnf_instances")
    assert_problem(r, 401)
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert r.headers["Version"] == "2.6.1"  # SOL013: every response says which version answered
    r = await api.c.get("/vnflcm/v1/vnf_instances", headers={"X-Auth-Token": "wrong"})
    assert_problem(r, 401)
    assert "t0ken-for-tests" not in r.text
    r = await api.c.post("/vnfpkgm/v1/vnf_packages", json={}, headers={"X-Auth-Token": "t0ken-for-tests-not"})
    assert_problem(r, 401)
    assert (await api.c.get("/vnfpkgm/v1/vnf_packages", headers={"X-Auth-Token": "t0ken-for-tests"})).json() == []

    r = await api.c.get("/vnflcm/v1/vnf_instances", headers={"X-Auth-Token": "t0ken-for-tests", "Version": "1.3.0"})
    assert r.status_code == 200
    r = await api.c.get("/vnflcm/v1/vnf_instances", headers={"Authorization": "Bearer t0ken-for-tests"})
    assert r.status_code == 200
    # api_versions stays readable (version discovery happens before authentication).
    assert (await api.c.get("/vnflcm/v1/api_versions")).status_code == 200
