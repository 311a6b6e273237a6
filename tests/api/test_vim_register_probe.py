"""`vnfm vim register --openrc FILE / --os-cloud NAME` and the server's probe of an OpenStack VIM
(`POST /vnfm/v1/vims?probe=true`), against a small fake Keystone on loopback that is as strict as
Keystone's v3 API for what is used: version discovery (GET /v3) and a password token request
(POST /v3/auth/tokens: 201 with X-Subject-Token, 401 with Keystone's error body, 400 for a body
that is not a v3 auth request)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vnfm.entrypoints.api.server import start_in_thread
from vnfm.entrypoints.cli.main import cli

from .conftest import Api, LocalHttpServer, settings_for
from .test_packages import assert_problem

USER, PASSWORD, PROJECT = "admin", "Keyst0ne-s3cret", "demo"


class FakeKeystone(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _base(self) -> str:
        return f"http://{self.headers['Host']}"

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/") != "/v3":
            self._send(404, {"error": {"code": 404, "title": "Not Found", "message": "not found"}})
            return
        self._send(200, {"version": {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
                                     "links": [{"rel": "self", "href": f"{self._base()}/v3/"}],
                                     "media-types": [{"base": "application/json",
                                                      "type": "application/vnd.openstack.identity-v3+json"}]}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        try:
            auth = json.loads(self.rfile.read(length))["auth"]
            methods = auth["identity"]["methods"]
            user = auth["identity"]["password"]["user"]
            scope = auth["scope"]["project"]
            ok_shape = (self.path == "/v3/auth/tokens" and methods == ["password"]
                        and user["domain"]["name"] == "Default" and scope["domain"]["name"] == "Default")
        except (KeyError, TypeError, ValueError):
            ok_shape = False
        if not ok_shape:
            self._send(400, {"error": {"code": 400, "title": "Bad Request", "message": "malformed auth request"}})
            return
        if (user["name"], user["password"], scope["name"]) != (USER, PASSWORD, PROJECT):
            self._send(401, {"error": {"code": 401, "title": "Unauthorized",
                                       "message": "The request you have made requires authentication."}})
            return
        token = {"token": {"methods": ["password"], "expires_at": "2099-01-01T00:00:00.000000Z",
                           "user": {"id": "u1", "name": USER, "domain": {"id": "default", "name": "Default"}},
                           "project": {"id": "p1", "name": PROJECT, "domain": {"id": "default", "name": "Default"}},
                           "catalog": [], "roles": [{"id": "r1", "name": "admin"}]}}
        self._send(201, token, {"X-Subject-Token": "tok-1"})


@pytest.fixture
def keystone() -> Iterator[str]:
    with LocalHttpServer(FakeKeystone) as server:
        yield f"{server.base}/v3"


def openrc(tmp_path: Path, auth_url: str, password: str = PASSWORD) -> Path:
    path = tmp_path / "admin-openrc.sh"
    path.write_text(f"export OS_AUTH_URL={auth_url}\nexport OS_USERNAME={USER}\nexport OS_PASSWORD='{password}'\n"
                    f"export OS_PROJECT_NAME={PROJECT}\nexport OS_USER_DOMAIN_NAME=Default\n"
                    "export OS_PROJECT_DOMAIN_NAME=Default\nexport OS_REGION_NAME=RegionOne\n")
    return path


def body(auth_url: str, password: str = PASSWORD) -> dict[str, Any]:
    return {"name": "cloud", "vimType": "openstack",
            "accessInfo": {"authUrl": auth_url, "username": USER, "password": password, "project": PROJECT}}


async def test_the_probe_says_what_failed_and_registers_nothing(api: Api, keystone: str) -> None:
    r = await api.c.post("/vnfm/v1/vims?probe=true", json=body("http://127.0.0.1:9/v3"))
    assert_problem(r, 422, "was not registered", "does not answer")
    r = await api.c.post("/vnfm/v1/vims?probe=true", json=body(keystone, "wrong"))
    problem = assert_problem(r, 422, "refused the credentials")
    assert "wrong" not in json.dumps(problem)
    r = await api.c.post("/vnfm/v1/vims?probe=true", json=body(keystone.removesuffix("/v3") + "/nothing"))
    assert_problem(r, 422, "was not registered")
    assert [v["vimType"] for v in (await api.c.get("/vnfm/v1/vims")).json()] == ["simulator"]
    r = await api.c.post("/vnfm/v1/vims?probe=true", json=body(keystone))
    assert r.status_code == 201, r.text
    r = await api.c.post("/vnfm/v1/vims?probe=true", json={"name": "k", "vimType": "kubernetes",
                                                          "accessInfo": {"authUrl": "https://k:6443"}})
    assert_problem(r, 422, "cannot be probed")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    handle = start_in_thread(settings_for(tmp_path / "srv", host="127.0.0.1", port=0))
    try:
        yield handle.url
    finally:
        handle.stop()


def run(url: str, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--endpoint", url, *args], catch_exceptions=False)


def test_register_from_openrc_and_clouds_yaml(tmp_path: Path, keystone: str, server: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    res = run(server, "vim", "register", "--openrc", str(openrc(tmp_path, keystone, "wrong")))
    assert res.exit_code != 0 and "refused the credentials" in res.output and "wrong" not in res.output
    res = run(server, "-o", "json", "vim", "register", "--openrc", str(openrc(tmp_path, keystone)),
              "--name", "mine", "--is-default")
    assert res.exit_code == 0, res.output
    vim = json.loads(res.output)
    assert vim["name"] == "mine" and vim["isDefault"] is True and PASSWORD not in res.output
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(json.dumps({"clouds": {"lab": {"region_name": "RegionOne", "auth": {
        "auth_url": keystone, "username": USER, "password": PASSWORD, "project_name": PROJECT,
        "user_domain_name": "Default", "project_domain_name": "Default"}}}}))
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))
    res = run(server, "-o", "json", "vim", "register", "--os-cloud", "lab")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["name"] == "lab"
    res = run(server, "vim", "register", "--os-cloud", "nowhere")
    assert res.exit_code == 2 and "nowhere" in res.output
    res = run(server, "vim", "register")
    assert res.exit_code == 2 and "one of FILE, --openrc or --os-cloud" in res.output
