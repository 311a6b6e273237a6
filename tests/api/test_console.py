"""The web console (/console): its pages over the same data as the API, its login (a cookie the
API never takes), role-based buttons that the server enforces too, CSRF-safe forms, and no secret
in any page."""

from __future__ import annotations

import re
from typing import Any

import pytest

from vnfm.domain.alarms import CAUSE_SERVER_DOWN, PerceivedSeverity
from vnfm.entrypoints.api.console.session import COOKIE
from vnfm.service.fm.alarms import Finding

from .conftest import MASTER_PW, WORKER_PW, Api, ApiFactory, seed_body
from .test_oauth2 import SECRETS, bearer, clients, token_of

ORIGIN = {"Origin": "http://vnfm.test"}
FORM = {**ORIGIN, "Content-Type": "application/x-www-form-urlencoded"}


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found, "no csrf field on the page"
    return found.group(1)


async def login(api: Api, name: str) -> dict[str, str]:
    """The session cookie the console sets for client `name` (as a Cookie header)."""
    r = await api.c.post("/console/login", content=f"client_id={name}&client_secret={SECRETS[name]}", headers=FORM)
    assert r.status_code == 303 and r.headers["location"] == "/console/", r.text
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/console" in cookie, cookie
    assert f"Max-Age={api.core.settings.oauth2_token_lifetime}" in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    return {"Cookie": f"{COOKIE}={value}"}


@pytest.fixture
async def secured(api_factory: ApiFactory) -> tuple[Api, str, str]:
    """OAuth 2.0 on; tenant-a onboarded a package; an instantiation FAILED_TEMP (a worker not built)."""
    api = await api_factory(oauth2_clients=clients())
    admin = bearer(await token_of(api, "admin"))
    api.c.headers.update(bearer(await token_of(api, "ops-a")))
    _pkg, vnfd_id = await api.onboard()
    assert (await api.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}},
                             headers=admin)).status_code == 204
    inst_id = await api.create_instance(vnfd_id)
    occ = await api.wait_op(await api.task(inst_id, "instantiate", seed_body()))
    assert occ["operationState"] == "FAILED_TEMP"
    assert (await api.c.delete("/sim/v1/faults", headers=admin)).status_code == 204
    del api.c.headers["Authorization"]
    return api, inst_id, occ["id"]


async def test_pages_need_a_login_and_the_cookie_opens_only_the_console(secured: tuple[Api, str, str]) -> None:
    api, _inst, op_id = secured
    r = await api.c.get("/console/")
    assert r.status_code == 303 and r.headers["location"] == "/console/login"
    assert (await api.c.get(f"/console/ops/{op_id}/progress")).status_code == 401  # the script's poll
    page = await api.c.get("/console/login")
    assert page.status_code == 200 and 'name="client_secret"' in page.text
    assert (await api.c.get("/console/static/console.css")).status_code == 200  # styled before a login
    bad = await api.c.post("/console/login", content="client_id=ops-a&client_secret=wrong", headers=FORM)
    assert bad.status_code == 401 and "set-cookie" not in bad.headers
    assert (await api.c.post("/console/login", content="client_id=ops-a&client_secret=x",
                             headers={"Content-Type": "application/x-www-form-urlencoded"})).status_code == 403
    cookie = await login(api, "ops-a")
    assert (await api.c.get("/console/", headers=cookie)).status_code == 200
    # the cookie is the console's: the API wants its bearer token (no CSRF through the API)
    assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=cookie)).status_code == 401
    # a pasted access token logs in too (any token the API takes)
    token = await token_of(api, "reader-a")
    r = await api.c.post("/console/login", content=f"token={token}", headers=FORM)
    assert r.status_code == 303 and "Max-Age" not in r.headers["set-cookie"]
    out = await api.c.post("/console/logout", content="", headers=FORM)
    assert out.status_code == 303 and f'{COOKIE}=""' in out.headers["set-cookie"]


async def test_fleet_instance_and_operation_pages(secured: tuple[Api, str, str]) -> None:
    api, inst_id, op_id = secured
    cookie = await login(api, "ops-a")
    fleet = await api.c.get("/console/", headers=cookie)
    assert fleet.status_code == 200 and fleet.headers["content-type"].startswith("text/html")
    assert fleet.headers["cache-control"] == "no-store"
    assert "script-src 'self'" in fleet.headers["content-security-policy"]
    assert f"/console/ops/{op_id}" in fleet.text and "FAILED_TEMP" in fleet.text
    assert re.search(r'<span class="n">1</span> NOT_INSTANTIATED', fleet.text)
    inst = await api.c.get(f"/console/instances/{inst_id}", headers=cookie)
    assert inst.status_code == 200 and "No open alarm" in inst.text and "INSTANTIATE" in inst.text
    op = await api.c.get(f"/console/ops/{op_id}", headers=cookie)
    assert op.status_code == 200 and "What to do next" in op.text and 'id="error"' in op.text
    assert 'id="retry-button"' in op.text and 'id="rollback-button"' in op.text and 'id="fail-button"' in op.text
    progress = (await api.c.get(f"/console/ops/{op_id}/progress", headers=cookie)).json()
    assert progress["state"] == "FAILED_TEMP" and progress["final"] and progress["events"]
    assert [r["action"] for r in progress["remedies"]] == ["retry", "rollback", "fail"]
    packages = await api.c.get("/console/packages", headers=cookie)
    assert packages.status_code == 200 and "ONBOARDED" in packages.text and "IN_USE" in packages.text
    vims = await api.c.get("/console/vims", headers=cookie)  # tenant-a registered none (the simulator's is admin's)
    assert vims.status_code == 200 and "No VIM registered" in vims.text
    missing = await api.c.get("/console/instances/no-such-id", headers=cookie)
    assert missing.status_code == 404 and "does not exist" in missing.text
    for r in (fleet, inst, op):
        assert MASTER_PW not in r.text and WORKER_PW not in r.text and SECRETS["ops-a"] not in r.text
    assert MASTER_PW not in str(progress) and cookie["Cookie"].split("=", 1)[1] not in op.text


async def test_a_reader_sees_no_button_and_cannot_act(secured: tuple[Api, str, str]) -> None:
    api, _inst, op_id = secured
    cookie = await login(api, "reader-a")
    page = await api.c.get(f"/console/ops/{op_id}", headers=cookie)
    assert page.status_code == 200 and "<button" not in page.text.split("</header>")[1]
    assert "Only an operator can act on it" in page.text
    r = await api.c.post(f"/console/ops/{op_id}/retry", content="csrf=x", headers={**FORM, **cookie})
    assert r.status_code == 403
    state = await api.c.get(f"/console/ops/{op_id}/progress", headers=cookie)
    assert state.json()["state"] == "FAILED_TEMP"
    other = await login(api, "ops-b")  # an operator of another tenant: the occurrence does not exist for it
    assert (await api.c.get(f"/console/ops/{op_id}", headers=other)).status_code == 404
    fleet = await api.c.get("/console/", headers=other)
    assert op_id not in fleet.text and "No VNF instance yet" in fleet.text


async def test_an_operator_retries_through_a_csrf_safe_form(secured: tuple[Api, str, str]) -> None:
    api, _inst, op_id = secured
    cookie = await login(api, "ops-a")
    csrf = csrf_of((await api.c.get(f"/console/ops/{op_id}", headers=cookie)).text)
    url = f"/console/ops/{op_id}/retry"
    refused: list[dict[str, Any]] = [
        {"content": "csrf=" + "0" * 64, "headers": {**FORM, **cookie}},  # another session's value
        {"content": f"csrf={csrf}", "headers": {**FORM, **cookie, "Origin": "https://evil.test"}},
        {"content": f"csrf={csrf}", "headers": {"Content-Type": "application/x-www-form-urlencoded", **cookie}},
    ]
    for attempt in refused:
        assert (await api.c.post(url, **attempt)).status_code == 403, attempt
    r = await api.c.post(url, content=f"csrf={csrf}", headers={**FORM, **cookie})
    assert r.status_code == 303 and r.headers["location"] == f"/console/ops/{op_id}"
    api.c.headers.update(bearer(await token_of(api, "ops-a")))
    done = await api.wait_op(f"/vnflcm/v1/vnf_lcm_op_occs/{op_id}", {"COMPLETED", "FAILED_TEMP"})
    assert done["operationState"] == "COMPLETED", done.get("error")
    for content, why in ((f"csrf={csrf}&force=1", "is unknown here"), (f"csrf={csrf}&csrf={csrf}", "more than once")):
        r = await api.c.post(url, content=content, headers={**FORM, **cookie})
        assert r.status_code == 400 and why in r.text, r.text
    assert (await api.c.get(f"/console/ops/{op_id}?verbose=1", headers=cookie)).status_code == 400
    again = await api.c.post(url, content=f"csrf={csrf}", headers={**FORM, **cookie})
    assert again.status_code == 409 and "FAILED_TEMP" in again.text  # said on a page, not as JSON


async def test_a_cluster_shows_its_nodes_and_open_alarms(onboarded: tuple[Api, str, str]) -> None:
    api, _pkg, vnfd_id = onboarded  # no authentication configured: the anonymous admin, no login
    inst_id = await api.instantiated(vnfd_id)

    assert (await api.c.get("/console/login")).status_code == 303
    fleet = (await api.c.get("/console/")).text
    assert "1 master, 1 worker" in fleet or re.search(r"\d+ masters?, \d+ workers?", fleet), fleet
    page = (await api.c.get(f"/console/instances/{inst_id}")).text
    assert "Kubernetes nodes" in page and "Ready" in page and "Not read" not in page, page
    assert re.search(r"API server: <code>https://[0-9.]+:\d+/\S*</code>", page), page
    assert "No open alarm" in page and "CRITICAL" not in page
    down = Finding(CAUSE_SERVER_DOWN, ("server w-1 is SHUTOFF",), PerceivedSeverity.CRITICAL)
    api.core.alarms.record(inst_id, "default", {"vnfc-w1": down})  # as the health watcher raises it
    page = (await api.c.get(f"/console/instances/{inst_id}")).text
    assert "CRITICAL" in page and "server w-1 is SHUTOFF" in page and "No open alarm" not in page
    assert MASTER_PW not in page and WORKER_PW not in page
