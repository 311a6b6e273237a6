"""The one middleware around the application (entrypoints/api/edge.py) writes what the three it
replaced wrote, in the same order: the route's headers (a ProblemDetails relabelled as the client
accepts it), X-Request-Id, then Version and Date, every name in its canonical spelling."""

from __future__ import annotations

from email.utils import parsedate_to_datetime

import httpx

from .conftest import Api


def names(r: httpx.Response) -> list[str]:
    return [k.decode() for k, _ in r.headers.raw]


async def test_header_order_and_spelling(onboarded: tuple[Api, str, str]) -> None:
    api, _, vnfd_id = onboarded
    r = await api.c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id}, headers={"X-Request-Id": "r-1"})
    assert r.status_code == 201
    assert names(r) == ["Location", "Content-Length", "Content-Type", "X-Request-Id", "Version", "Date"]
    assert r.headers["X-Request-Id"] == "r-1" and r.headers["Version"] == "2.6.1"
    assert parsedate_to_datetime(r.headers["Date"]).tzinfo is not None

    r = await api.c.get("/vnflcm/v1/vnf_instances/nope", headers={"Accept": "application/json"})
    assert r.status_code == 404 and r.headers["Content-Type"] == "application/json"  # relabelled, same body
    r = await api.c.get("/vnflcm/v1/vnf_instances/nope")
    assert r.status_code == 404 and r.headers["Content-Type"] == "application/problem+json"
    assert names(r) == ["Content-Length", "Content-Type", "X-Request-Id", "Version", "Date"]

    r = await api.c.get("/vnflcm/v1/vnf_instances", headers={"Accept": "text/html"})  # refused before the route
    assert r.status_code == 406
    assert names(r) == ["Content-Type", "Content-Length", "X-Request-Id", "Version", "Date"]
    assert r.json()["detail"].endswith("is served as application/json")

    r = await api.c.delete("/vnflcm/v1/api_versions")
    assert r.status_code == 405
    assert names(r) == ["Content-Length", "Content-Type", "Allow", "X-Request-Id", "Version", "Date"]

    r = await api.c.get("/vnflcm//v2//vnf_instances")  # slashes merged before the Version is chosen
    assert r.headers["Version"] == "2.0.0"


async def test_control_characters_in_the_url(api: Api) -> None:
    """Refused wherever a request object's URL shows them (a newline in the path it drops, as before)."""
    for url in ("/vnflcm/v1/vnf_instances/a%01b", "/vnflcm/v1/vnf_instances?filter=%7F",
                "/vnflcm/v1/vnf_instances?x%00=1"):
        r = await api.c.get(url)
        assert r.status_code == 400 and "control character" in r.json()["detail"], url
    assert (await api.c.get("/vnflcm/v1/vnf_instances?filter=(eq,id,%41)")).status_code == 200
