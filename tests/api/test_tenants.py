"""Tenants: a caller sees and acts on its tenant's packages, instances, occurrences, subscriptions
and VIMs only (404 for another's, lists without them, notifications to its own subscriptions);
an admin crosses tenants."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest

from .conftest import Api, ApiFactory, seed_body
from .test_oauth2 import bearer, clients, token_of
from .test_packages import assert_problem
from .test_subscriptions import Receiver

LCM = "/vnflcm/v1"


@contextlib.asynccontextmanager
async def as_client(api: Api, name: str) -> AsyncIterator[Api]:
    token = await token_of(api, name)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api.app), base_url="http://vnfm.test",
                                 headers=bearer(token)) as client:
        yield Api(api.app, client)


@pytest.fixture
async def tenants(api_factory: ApiFactory) -> AsyncIterator[tuple[Api, Api, Api]]:
    api = await api_factory(oauth2_clients=clients("ops-a", "ops-b", "admin"))
    async with as_client(api, "ops-a") as a, as_client(api, "ops-b") as b, as_client(api, "admin") as admin:
        yield a, b, admin


async def test_tenant_b_neither_lists_nor_reaches_tenant_a_resources(tenants: tuple[Api, Api, Api]) -> None:
    a, b, admin = tenants
    with Receiver() as rec_a, Receiver() as rec_b:
        subs = {}
        for name, api, rec in (("a", a, rec_a), ("b", b, rec_b)):
            r = await api.c.post(f"{LCM}/subscriptions", json={"callbackUri": rec.url})
            assert r.status_code == 201, r.text
            subs[name] = r.json()["id"]
        pkg_id, vnfd_id = await a.onboard()
        inst_id = await a.create_instance(vnfd_id)
        occ = await a.run(inst_id, "instantiate", seed_body())
        await rec_a.wait_for(lambda n: n.get("operationState") == "COMPLETED")
        vim = await a.c.post("/vnfm/v1/vims", json={"name": "k8s-a", "vimType": "kubernetes", "accessInfo": {
            "authUrl": "https://k8s-a.example:6443", "bearer_token": "t0ken-of-a"}})
        assert vim.status_code == 201, vim.text
        vim_id = vim.json()["id"]

        # tenant B: empty lists, 404 for each of A's resources, whatever the method
        assert [s["id"] for s in (await b.c.get(f"{LCM}/subscriptions")).json()] == [subs["b"]]
        assert_problem(await b.c.get(f"{LCM}/subscriptions/{subs['a']}"), 404)
        assert_problem(await b.c.delete(f"{LCM}/subscriptions/{subs['a']}"), 404)
        for path in (f"{LCM}/vnf_instances", f"{LCM}/vnf_lcm_op_occs",
                     "/vnfpkgm/v1/vnf_packages", "/vnfm/v1/vims", "/v1.0/vims"):
            r = await b.c.get(path)
            assert r.status_code == 200, (path, r.text)
            body = r.json()
            listed = body["vims"] if isinstance(body, dict) else body
            assert listed == [], (path, listed)
        for method, path in (("GET", f"{LCM}/vnf_instances/{inst_id}"), ("DELETE", f"{LCM}/vnf_instances/{inst_id}"),
                             ("PATCH", f"{LCM}/vnf_instances/{inst_id}"),
                             ("POST", f"{LCM}/vnf_instances/{inst_id}/terminate"),
                             ("GET", f"{LCM}/vnf_lcm_op_occs/{occ['id']}"),
                             ("POST", f"{LCM}/vnf_lcm_op_occs/{occ['id']}/retry"),
                             ("GET", f"/vnfpkgm/v1/vnf_packages/{pkg_id}"),
                             ("GET", f"/vnfpkgm/v1/vnf_packages/{pkg_id}/vnfd"),
                             ("DELETE", f"/vnfpkgm/v1/vnf_packages/{pkg_id}"),
                             ("GET", f"/vnfm/v1/vims/{vim_id}"), ("DELETE", f"/vnfm/v1/vims/{vim_id}"),
                             ("GET", f"/vnfm/v1/vims/{vim_id}/kubeconfig")):
            body = {"vnfInstanceName": "hijacked"} if method == "PATCH" else {"terminationType": "FORCEFUL"}
            no_body = method in ("GET", "DELETE") or path.endswith("/retry")
            r = await b.c.request(method, path, json=None if no_body else body,
                                  headers={"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {})
            assert_problem(r, 404)
            assert "t0ken-of-a" not in r.text
        # B cannot build on A's package either
        r = await b.c.post(f"{LCM}/vnf_instances", json={"vnfdId": vnfd_id})
        assert r.status_code in (404, 422) and inst_id not in r.text
        # paging markers of A's rows do not work for B
        r = await b.c.get(f"{LCM}/vnf_instances", params={"nextpage_opaque_marker": inst_id})
        assert r.status_code in (200, 400, 404) and inst_id not in r.text

        # A sees its own; the admin sees everyone's
        assert [i["id"] for i in (await a.c.get(f"{LCM}/vnf_instances")).json()] == [inst_id]
        assert (await admin.c.get(f"{LCM}/vnf_instances/{inst_id}")).status_code == 200
        assert len((await admin.c.get(f"{LCM}/subscriptions")).json()) == 2
        # B's subscription heard nothing of A's instance
        assert rec_a.received and not rec_b.received


async def test_only_an_admin_registers_the_default_vim(tenants: tuple[Api, Api, Api]) -> None:
    a, _, admin = tenants
    body = {"name": "x", "vimType": "kubernetes", "isDefault": True,
            "accessInfo": {"authUrl": "https://k8s.example:6443", "bearer_token": "t"}}
    assert_problem(await a.c.post("/vnfm/v1/vims", json=body), 403)
    r = await admin.c.post("/vnfm/v1/vims", json={**body, "isDefault": False, "id": "shared-id"})
    assert r.status_code == 201, r.text
    # ids are unique across tenants: no 500 when A picks one another tenant holds
    r = await a.c.post("/vnfm/v1/vims", json={**body, "isDefault": False, "id": "shared-id"})
    assert_problem(r, 400)
