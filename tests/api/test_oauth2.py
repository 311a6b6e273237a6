"""OAuth 2.0 client credentials (SOL013 8.3): tokens of the built-in authorization server and of an
external issuer (a JWKS the test serves; an introspection endpoint), and the tokens refused."""

from __future__ import annotations

import base64
import json
import time
from functools import cache
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from vnfm.adapters.auth.keys import SigningKey, load_keys
from vnfm.adapters.auth.tokens import issue
from vnfm.domain.secret_hash import hash_secret

from .conftest import Api, ApiFactory, LocalHttpServer
from .test_packages import assert_problem

SECRETS = {"ops-a": "0ps-a-s3cret-value", "reader-a": "r3ader-a-s3cret-value", "admin": "adm1n-s3cret-value",
           "ops-b": "0ps-b-s3cret-value"}
ROLES = {"ops-a": (["operator"], "tenant-a"), "reader-a": (["reader"], "tenant-a"), "admin": (["admin"], "ops"),
         "ops-b": (["operator"], "tenant-b")}


@cache
def _hash(secret: str) -> str:
    return hash_secret(secret)


def clients(*names: str) -> list[dict[str, Any]]:
    return [{"client_id": n, "secret_hash": _hash(SECRETS[n]), "roles": ROLES[n][0], "tenant": ROLES[n][1]}
            for n in names or tuple(SECRETS)]


async def token_of(api: Api, name: str, *, post: bool = False, scope: str | None = None) -> str:
    form = {"grant_type": "client_credentials"}
    if scope is not None:
        form["scope"] = scope
    if post:
        r = await api.c.post("/oauth2/token", data={**form, "client_id": name, "client_secret": SECRETS[name]})
    else:
        r = await api.c.post("/oauth2/token", data=form, auth=(name, SECRETS[name]))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 300
    assert r.headers["cache-control"] == "no-store"
    return str(body["access_token"])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_built_in_server_issues_tokens_that_open_what_their_roles_allow(api_factory: ApiFactory) -> None:
    api = await api_factory(oauth2_clients=clients())
    ops = await token_of(api, "ops-a")
    reader = await token_of(api, "reader-a", post=True)
    claims = jwt.decode(ops, options={"verify_signature": False})
    assert (claims["iss"], claims["aud"], claims["sub"], claims["roles"], claims["tenant"]) == \
        ("vnfm", "vnfm", "ops-a", ["operator"], "tenant-a")
    assert claims["exp"] - claims["iat"] == 300 and SECRETS["ops-a"] not in ops
    r = await api.c.post("/vnfpkgm/v1/vnf_packages", json={}, headers=bearer(ops))
    assert r.status_code == 201, r.text
    assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(reader))).status_code == 200
    # X-Auth-Token carries a bearer token too (python-tackerclient / openstack --os-token)
    assert (await api.c.get("/vnflcm/v1/vnf_instances", headers={"X-Auth-Token": reader})).status_code == 200
    # a reader attempting an LCM task, or any change: 403 before anything happens
    for method, path in (("POST", "/vnflcm/v1/vnf_instances/any-id/instantiate"),
                         ("POST", "/vnflcm/v1/vnf_instances"), ("POST", "/vnfpkgm/v1/vnf_packages"),
                         ("DELETE", "/vnfm/v1/vims/x"), ("POST", "/vnflcm/v1/vnf_lcm_op_occs/x/retry")):
        r = await api.c.request(method, path, json={"vnfdId": "x"}, headers=bearer(reader))
        assert_problem(r, 403)
        assert "needs the operator role" in r.json()["detail"]
    # the simulator, fault injection and metrics: admin only
    for path in ("/sim/v1/state", "/metrics"):
        assert_problem(await api.c.get(path, headers=bearer(ops)), 403)
    admin = await token_of(api, "admin")
    assert (await api.c.get("/sim/v1/state", headers=bearer(admin))).status_code == 200
    r = await api.c.post("/sim/v1/faults", json={"fail_delete": True}, headers=bearer(ops))
    assert_problem(r, 403)
    assert (await api.c.delete("/sim/v1/faults", headers=bearer(admin))).status_code == 204
    # a narrower scope gives fewer roles; a scope beyond the client's roles is refused
    r = await api.c.post("/oauth2/token", data={"grant_type": "client_credentials", "scope": "admin"},
                         auth=("ops-a", SECRETS["ops-a"]))
    assert r.status_code == 400 and r.json()["error"] == "invalid_scope"


async def test_token_endpoint_refuses_bad_clients_and_requests(api_factory: ApiFactory) -> None:
    api = await api_factory(oauth2_clients=clients("ops-a"))
    form = {"grant_type": "client_credentials"}
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"data": form, "auth": ("ops-a", "wrong-secret-value")}, 401, "invalid_client"),
        ({"data": form, "auth": ("nobody", SECRETS["ops-a"])}, 401, "invalid_client"),
        ({"data": form}, 401, "invalid_client"),
        ({"data": {**form, "client_id": "ops-a", "client_secret": SECRETS["ops-a"]}, "auth": ("ops-a", "x")},
         400, "invalid_request"),
        ({"data": {"grant_type": "password"}, "auth": ("ops-a", SECRETS["ops-a"])}, 400, "unsupported_grant_type"),
        ({"json": form, "auth": ("ops-a", SECRETS["ops-a"])}, 400, "invalid_request"),
        ({"content": "grant_type=client_credentials&grant_type=client_credentials",
          "headers": {"Content-Type": "application/x-www-form-urlencoded"}, "auth": ("ops-a", SECRETS["ops-a"])},
         400, "invalid_request"),
    ]
    for kwargs, status, error in cases:
        r = await api.c.post("/oauth2/token", **kwargs)
        assert r.status_code == status and r.json()["error"] == error, (kwargs, r.text)
        assert SECRETS["ops-a"] not in r.text and "access_token" not in r.text
        if status == 401:
            assert r.headers["WWW-Authenticate"].startswith("Basic")


def _forged(api: Api, **changes: Any) -> str:
    key = load_keys(api.core.settings.data_dir)[0]
    claims = {"subject": "ops-a", "roles": ["operator"], "tenant": "tenant-a", "lifetime": 300,
              "issuer": "vnfm", "audience": "vnfm", **changes}
    signer = claims.pop("key", key)
    token, _ = issue(signer, **claims)
    return token


async def test_expired_wrong_audience_wrong_signature_and_revoked_tokens_are_refused(
        api_factory: ApiFactory) -> None:
    api = await api_factory(oauth2_clients=clients("ops-a", "reader-a"))
    good = _forged(api)
    assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(good))).status_code == 200
    key = load_keys(api.core.settings.data_dir)[0]
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    bad = {
        "expired": _forged(api, lifetime=-120),
        "wrong audience": _forged(api, audience="another-service"),
        "wrong issuer": _forged(api, issuer="somebody-else"),
        "wrong signature": _forged(api, key=SigningKey(key.kid, Ed25519PrivateKey.generate())),
        "unknown client": _forged(api, subject="ghost"),
        "tampered": good[:-6] + ("AAAAAA" if not good.endswith("AAAAAA") else "BBBBBB"),
        "unsigned": jwt.encode({"iss": "vnfm", "aud": "vnfm", "sub": "ops-a", "tenant": "tenant-a",
                                "roles": ["admin"], "exp": int(time.time()) + 60, "iat": int(time.time())},
                               None, algorithm="none"),
        "garbage": "not-a-token",
    }
    for why, token in bad.items():
        r = await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(token))
        assert_problem(r, 401)
        assert r.headers["WWW-Authenticate"].startswith("Bearer"), why
    # revoked: the client is removed from the configuration; its tokens stop working at once
    api2 = await api_factory(oauth2_clients=clients("reader-a"), data_dir=api.core.settings.data_dir)
    assert_problem(await api2.c.get("/vnflcm/v1/vnf_instances", headers=bearer(good)), 401)
    # a client whose roles shrank keeps only those it still has
    shrunk = [{**clients("ops-a")[0], "roles": ["reader"]}]
    api3 = await api_factory(oauth2_clients=shrunk, data_dir=api.core.settings.data_dir)
    assert (await api3.c.get("/vnflcm/v1/vnf_instances", headers=bearer(good))).status_code == 200
    assert_problem(await api3.c.post("/vnfpkgm/v1/vnf_packages", json={}, headers=bearer(good)), 403)


async def test_rotated_signing_key_keeps_old_tokens_valid(api_factory: ApiFactory) -> None:
    from vnfm.adapters.auth.keys import rotate

    api = await api_factory(oauth2_clients=clients("ops-a"))
    old = await token_of(api, "ops-a")
    new_key, removed = rotate(api.core.settings.data_dir)
    assert not removed
    api.app.state.auth.signing_keys(fresh=True)
    new = await token_of(api, "ops-a")
    assert jwt.get_unverified_header(new)["kid"] == new_key.kid != jwt.get_unverified_header(old)["kid"]
    jwks = (await api.c.get("/oauth2/jwks")).json()["keys"]
    assert {k["kid"] for k in jwks} == {new_key.kid, jwt.get_unverified_header(old)["kid"]}
    assert all("d" not in k for k in jwks)  # public halves only
    for token in (old, new):
        assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(token))).status_code == 200
    rotate(api.core.settings.data_dir)  # the oldest key goes: tokens it signed stop working
    api.app.state.auth.signing_keys(fresh=True)
    assert_problem(await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(old)), 401)
    assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(new))).status_code == 200


class _Issuer(BaseHTTPRequestHandler):
    """A test authorization server: its JWKS, and RFC 7662 introspection of the opaque tokens it knows."""

    jwks: ClassVar[dict[str, Any]] = {"keys": []}
    active: ClassVar[dict[str, dict[str, Any]]] = {}
    fetches: ClassVar[list[str]] = []

    def do_GET(self) -> None:  # noqa: N802
        self.fetches.append(self.path)
        self._answer(200, self.jwks) if self.path == "/jwks" else self._answer(404, {})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        form = dict(p.split("=", 1) for p in self.rfile.read(length).decode().split("&"))
        if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"vnfm-rs:rs-s3cret").decode():
            self._answer(401, {"error": "invalid_client"})
            return
        self._answer(200, self.active.get(form.get("token", ""), {"active": False}))

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _rsa_jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, Any]:
    jwk: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {**jwk, "kid": kid, "use": "sig", "alg": "RS256"}


def _external(key: rsa.RSAPrivateKey, kid: str, **changes: Any) -> str:
    now = int(time.time())
    claims = {"iss": "https://issuer.test", "aud": "vnfm", "sub": "nfvo-1", "iat": now, "exp": now + 300,
              "roles": ["operator"], "tenant": "tenant-a", **changes}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


async def test_tokens_of_an_external_issuer_checked_against_its_jwks(api_factory: ApiFactory) -> None:
    k1 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    k2 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _Issuer.jwks = {"keys": [_rsa_jwk(k1, "k1")]}
    _Issuer.fetches = []
    with LocalHttpServer(_Issuer) as issuer:
        api = await api_factory(oauth2_external_issuer="https://issuer.test", oauth2_jwks_url=issuer.base + "/jwks",
                                oauth2_jwks_refetch_after=0)
        good = _external(k1, "k1")
        assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(good))).status_code == 200
        r = await api.c.post("/vnfpkgm/v1/vnf_packages", json={}, headers=bearer(good))
        assert r.status_code == 201, r.text
        assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(good))).status_code == 200
        assert _Issuer.fetches == ["/jwks"]  # the key set is cached
        for token in (_external(k1, "k1", exp=int(time.time()) - 120), _external(k1, "k1", aud="other"),
                      _external(k2, "k1"), _external(k1, "k1", tenant=None), _external(k1, "k1", iss="https://evil"),
                      _external(k2, "k-unknown")):
            assert_problem(await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(token)), 401)
        reader = _external(k1, "k1", roles=None, scope="openid reader")
        assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(reader))).status_code == 200
        assert_problem(await api.c.post("/vnflcm/v1/vnf_instances/x/terminate", json={}, headers=bearer(reader)),
                       403)
        # the issuer rotates its key: a token with the new kid makes vnfm fetch the key set again
        _Issuer.jwks = {"keys": [_rsa_jwk(k1, "k1"), _rsa_jwk(k2, "k2")]}
        assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(_external(k2, "k2")))).status_code == 200


async def test_opaque_tokens_by_introspection_and_a_revoked_one(api_factory: ApiFactory) -> None:
    now = int(time.time())
    _Issuer.active = {"opaque-good": {"active": True, "sub": "nfvo-2", "aud": "vnfm", "exp": now + 300,
                                      "scope": "operator", "tenant": "tenant-b"},
                      "opaque-other-aud": {"active": True, "sub": "x", "aud": "else", "tenant": "t", "scope": "admin"},
                      "opaque-expired": {"active": True, "sub": "x", "exp": now - 300, "tenant": "t", "scope": "admin"}}
    with LocalHttpServer(_Issuer) as issuer:
        api = await api_factory(oauth2_introspection_url=issuer.base + "/introspect",
                                oauth2_introspection_client_id="vnfm-rs",
                                oauth2_introspection_client_secret="rs-s3cret")
        assert (await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer("opaque-good"))).status_code == 200
        for token in ("opaque-revoked", "opaque-other-aud", "opaque-expired"):
            assert_problem(await api.c.get("/vnflcm/v1/vnf_instances", headers=bearer(token)), 401)


async def test_an_audit_line_says_who_did_what_to_which_resource(api_factory: ApiFactory,
                                                                  caplog: Any) -> None:
    import logging

    api = await api_factory(oauth2_clients=clients("ops-a", "reader-a"))
    ops, reader = await token_of(api, "ops-a"), await token_of(api, "reader-a")
    caplog.set_level(logging.INFO, logger="vnfm.audit")
    pkg = (await api.c.post("/vnfpkgm/v1/vnf_packages", json={}, headers=bearer(ops))).json()["id"]
    await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg}", headers=bearer(ops))  # a read: no audit line
    await api.c.delete(f"/vnfpkgm/v1/vnf_packages/{pkg}", headers=bearer(reader))
    await api.c.delete(f"/vnfpkgm/v1/vnf_packages/{pkg}", headers=bearer("forged"))
    lines = [r for r in caplog.records if r.name == "vnfm.audit"]
    assert [(r.subject, r.tenant, r.method, r.route, r.status) for r in lines] == [  # type: ignore[attr-defined]
        ("ops-a", "tenant-a", "POST", "/vnfpkgm/v1/vnf_packages", 201),
        ("reader-a", "tenant-a", "DELETE", "/vnfpkgm/v1/vnf_packages/{pkg_id}", 403),
        (None, None, "DELETE", f"/vnfpkgm/v1/vnf_packages/{pkg}", 401),
    ]
    assert lines[1].resource == {"pkg_id": pkg}  # type: ignore[attr-defined]
    assert all("forged" not in r.getMessage() and ops not in r.getMessage() for r in lines)
