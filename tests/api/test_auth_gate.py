"""Authentication exemptions are exact paths and every route has a rule in the one role table."""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute

from vnfm.entrypoints.api.auth.rules import PUBLIC, ROUTE_RULES, rule_for

from .conftest import Api, ApiFactory
from .test_packages import assert_problem

TOKEN = "t0ken-for-tests"


def all_routes(api: Api) -> list[tuple[str, str]]:
    """(method, template) of every route the app serves (those of included routers too)."""
    found: list[tuple[str, str]] = []

    def walk(routes: list[Any]) -> None:
        for route in routes:
            inner = getattr(route, "original_router", None)  # FastAPI >= 0.165 keeps included routers whole
            if inner is not None:
                walk(inner.routes)
                continue
            for method in sorted(getattr(route, "methods", None) or ()):
                if method != "HEAD" or not isinstance(route, APIRoute):
                    found.append((method, route.path))

    walk(api.app.router.routes)
    return found


async def test_every_route_has_exactly_one_rule_and_public_ones_are_exact(api: Api) -> None:
    routes = all_routes(api)
    assert len(routes) > 60 and ("POST", "/sim/v1/faults") in routes  # fault injection is on in the tests
    missing = [r for r in routes if rule_for(*r) is None]
    assert not missing, f"routes without an access rule in entrypoints/api/auth/rules.py: {missing}"
    stale = sorted(set(ROUTE_RULES) - set(routes))
    assert not stale, f"rules for routes that do not exist: {stale}"
    for (method, template), role in ROUTE_RULES.items():
        if role == PUBLIC:
            assert "{" not in template and method in ("GET", "POST"), (method, template)
    public = sorted(t for (_, t), role in ROUTE_RULES.items() if role == PUBLIC)
    assert public == sorted(["/vnflcm/api_versions", "/vnflcm/v1/api_versions", "/vnflcm/v2/api_versions",
                             "/vnfpkgm/api_versions",
                             "/vnfpkgm/v1/api_versions", "/vnffm/api_versions", "/vnffm/v1/api_versions",
                             "/healthz", "/readyz", "/oauth2/token", "/oauth2/jwks",
                             # the console's login, logout and the two assets its login page uses
                             "/console/login", "/console/login", "/console/logout",
                             "/console/static/console.css", "/console/static/console.js"])
    # the simulator and its fault injection span every tenant: admin only
    assert {ROUTE_RULES[("GET", "/sim/v1/state")], ROUTE_RULES[("POST", "/sim/v1/faults")]} == {"admin"}


async def test_a_route_without_a_rule_is_refused(api: Api) -> None:
    @api.app.get("/vnfm/v1/unruled")
    async def unruled() -> dict[str, str]:
        return {"reached": "yes"}

    r = await api.c.get("/vnfm/v1/unruled")
    assert_problem(r, 403)
    assert "no access rule" in r.json()["detail"] and "reached" not in r.text


async def test_exemptions_are_exact_paths_not_suffixes(api_factory: ApiFactory) -> None:
    """A VIM whose id ends in api_versions was readable, changeable and deletable without a token."""
    api = await api_factory(auth_token=TOKEN)
    auth = {"X-Auth-Token": TOKEN}
    body = {"vim": {"name": "v", "type": "kubernetes", "auth_url": "https://k8s.example:6443",
                    "auth_cred": {"bearer_token": "s3cret-bearer"}, "vim_project": {"name": "default"}}}
    r = await api.c.post("/v1.0/vims", json=body, headers=auth)
    assert r.status_code == 201, r.text
    for method, path in (("GET", "/v1.0/vims/x_api_versions"), ("PUT", "/v1.0/vims/x_api_versions"),
                         ("DELETE", "/v1.0/vims/x_api_versions"), ("GET", "/vnfm/v1/vims/api_versions"),
                         ("DELETE", "/vnfm/v1/vims/oops-api_versions"), ("GET", "/vnflcm/v1/api_versions/x"),
                         ("GET", "/vnflcm/v1/vnf_instances/api_versions"), ("GET", "/healthz/x"),
                         ("GET", "/metrics"), ("GET", "/sim/v1/state"), ("POST", "/sim/v1/faults"),
                         ("GET", "/openapi.json"), ("GET", "/no/such/api_versions")):
        r = await api.c.request(method, path, json={})
        assert_problem(r, 401)
        assert r.headers["WWW-Authenticate"].startswith("Bearer"), path
    for path in ("/vnflcm/v1/api_versions", "/vnflcm/api_versions", "/vnfpkgm/v1/api_versions",
                 "/vnfpkgm/api_versions", "/healthz", "/readyz"):
        assert (await api.c.get(path)).status_code == 200, path
    # the token opens everything (the static token is an admin of the default tenant)
    assert (await api.c.get("/metrics", headers=auth)).status_code == 200
    assert (await api.c.get("/sim/v1/state", headers=auth)).status_code == 200
