"""SOL005 upload_from_uri: the VNFM fetches the CSAR from a (local) web server, with BASIC auth."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from .conftest import Api, LocalHttpServer, csar_bytes
from .test_packages import assert_problem

PKGS = "/vnfpkgm/v1/vnf_packages"
USER, PASSWORD = "repo-user", "repo-PASSWORD-42"


class PackageRepo(LocalHttpServer):
    """Serves /pkg.zip (BASIC auth required), /big.zip (over the limit), /moved -> /pkg.zip."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        outer = self
        want = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                outer.requests.append(self.path)
                if self.path == "/moved":
                    self.send_response(302)
                    self.send_header("Location", "/pkg.zip")
                    self.end_headers()
                    return
                if self.headers.get("Authorization") != want:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="packages"')
                    self.end_headers()
                    return
                body = {"/pkg.zip": csar_bytes(), "/big.zip": b"PK" + b"\0" * (2 * 1024 * 1024)}.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/zip")
                self.end_headers()  # no Content-Length: the size limit must hold while streaming
                self.wfile.write(body)

        super().__init__(Handler)

    def url(self, path: str) -> str:
        return self.base + path


@pytest.fixture
def repo() -> Iterator[PackageRepo]:
    with PackageRepo() as r:
        yield r


async def _upload(api: Api, pkg_id: str, body: dict[str, Any]) -> Any:
    return await api.c.post(f"{PKGS}/{pkg_id}/package_content/upload_from_uri", json=body)


async def test_upload_from_uri_onboards_with_basic_auth(api: Api, repo: PackageRepo) -> None:
    pkg_id = await api.create_package()
    r = await _upload(api, pkg_id, {"addressInformation": repo.url("/moved"), "userName": USER,
                                    "password": PASSWORD})
    assert r.status_code == 202, r.text
    info = (await api.c.get(f"{PKGS}/{pkg_id}")).json()
    assert info["onboardingState"] == "ONBOARDED" and info["operationalState"] == "ENABLED"
    assert repo.requests == ["/moved", "/pkg.zip"]  # the redirect was followed
    content = await api.c.get(f"{PKGS}/{pkg_id}/package_content")
    assert content.content == csar_bytes()
    # onboarded packages take no more content
    assert_problem(await _upload(api, pkg_id, {"addressInformation": repo.url("/pkg.zip")}), 409, "ONBOARDED")


async def test_upload_from_uri_failures_say_why_and_keep_the_package(api: Api, repo: PackageRepo) -> None:
    pkg_id = await api.create_package()
    wrong = await _upload(api, pkg_id, {"addressInformation": repo.url("/pkg.zip"), "userName": USER,
                                        "password": "not-" + PASSWORD})
    body = assert_problem(wrong, 422, "could not be fetched", "/pkg.zip")
    # what the target answered (401) stays in the log; the URL's random port may contain "401" itself
    assert PASSWORD not in wrong.text and "401" not in re.sub(r":\d+/", ":PORT/", wrong.text)
    info = (await api.c.get(f"{PKGS}/{pkg_id}")).json()
    assert info["onboardingState"] == "CREATED"
    assert "could not be fetched" in info["onboardingFailureDetails"]["detail"] and body["status"] == 422

    missing = await _upload(api, pkg_id, {"addressInformation": repo.url("/nothing.zip"), "userName": USER,
                                          "password": PASSWORD})
    assert_problem(missing, 422, "could not be fetched")
    # credentials in the URI itself are not echoed either
    secret_uri = repo.url("/pkg.zip").replace("http://", f"http://{USER}:{PASSWORD}@") + "?token=abc"
    r = await _upload(api, pkg_id, {"addressInformation": secret_uri.replace("/pkg.zip", "/gone.zip")})
    assert_problem(r, 422, "could not be fetched")
    assert PASSWORD not in r.text and "token=abc" not in r.text
    # nobody listens there: the same answer as a 404 (no port scanning through the VNFM)
    closed = await _upload(api, pkg_id, {"addressInformation": "http://127.0.0.1:9/nothing.zip"})
    assert_problem(closed, 422, "could not be fetched")
    assert closed.json()["detail"].replace(":9/", "/") == missing.json()["detail"].replace(
        repo.base.removeprefix("http://127.0.0.1"), "")
    assert_problem(await _upload(api, pkg_id, {"addressInformation": "ftp://host/pkg.zip"}), 400, "http(s)")
    assert_problem(await _upload(api, pkg_id, {"userName": USER}), 400, "addressInformation")
    assert_problem(await _upload(api, pkg_id, {"addressInformation": repo.url("/pkg.zip"), "password": "x"}),
                   400, "userName")
    assert_problem(await _upload(api, "no-such-package", {"addressInformation": repo.url("/pkg.zip")}), 404)
    # after all that, the package still onboards
    r = await _upload(api, pkg_id, {"addressInformation": repo.url("/pkg.zip"), "userName": USER,
                                    "password": PASSWORD})
    assert r.status_code == 202, r.text


async def test_upload_from_uri_stops_at_the_size_limit(api: Api, repo: PackageRepo) -> None:
    api.core.packages.limits = type(api.core.packages.limits)(max_archive_bytes=1024 * 1024)
    pkg_id = await api.create_package()
    r = await _upload(api, pkg_id, {"addressInformation": repo.url("/big.zip"), "userName": USER,
                                    "password": PASSWORD})
    assert_problem(r, 413, "over the limit of 1048576")
    assert (await api.c.get(f"{PKGS}/{pkg_id}")).json()["onboardingState"] == "CREATED"
