"""SOL005 v2.6.1 VNF package management: /vnfpkgm/v1."""

from __future__ import annotations

from fastapi import Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.domain.errors import BadRequest, NotAcceptable, UnsupportedMediaType
from vnfm.domain.model import VnfPackage
from vnfm.entrypoints.api import query
from vnfm.entrypoints.api.common import ListSource, add_subscription_routes, app_of, json_body, listing
from vnfm.entrypoints.api.etag import if_match
from vnfm.entrypoints.api.ranges import ranged
from vnfm.entrypoints.api.routing import Router
from vnfm.packaging.stream import read_limited
from vnfm.service import views

router = Router(prefix="/vnfpkgm/v1")
# What a package content upload may be sent as ("": no Content-Type, as a plain PUT of the file).
_CONTENT_TYPES = {"application/zip", "application/x-zip-compressed", "application/octet-stream",
                  "multipart/form-data", ""}
versions = Router(prefix="/vnfpkgm")


@versions.get("/api_versions")
@router.get("/api_versions")
async def api_versions() -> dict[str, object]:
    """SOL013 9.3: the API version information, at the root and at the major version."""
    return {"uriPrefix": "/vnfpkgm/v1", "apiVersions": [{"version": "2.6.1", "isDeprecated": False}]}


@router.post("/vnf_packages", status_code=201)
async def create_package(request: Request) -> JSONResponse:
    body = await json_body(request, empty={})
    if not isinstance(body, dict):
        raise BadRequest("CreateVnfPkgInfoRequest must be a JSON object")
    unknown = set(body) - {"userDefinedData"}
    if unknown:
        raise BadRequest(f"not attributes of CreateVnfPkgInfoRequest: {', '.join(sorted(unknown))}")
    udd = body.get("userDefinedData") or {}
    if not isinstance(udd, dict):
        raise BadRequest("userDefinedData must be an object")
    pkg = await off_loop(app_of(request).packages.create, udd)
    info = views.package_info(pkg)
    location = str(request.url_for("show_package", pkg_id=pkg.id))
    return JSONResponse(info, status_code=201, headers={"Location": location})


@router.get("/vnf_packages")
async def list_packages(request: Request) -> Response:
    app = app_of(request)
    source = ListSource(app.packages.page, views.package_info, lambda p: p.id)
    return await listing(request, source, query.VNF_PKG_INFO_DEFAULT_EXCLUDED,
                         attributes=query.VNF_PKG_INFO_ATTRIBUTES, resource="VnfPkgInfo",
                         page_size=app.settings.page_size)


@router.get("/vnf_packages/{pkg_id}", name="show_package")
def show_package(request: Request, pkg_id: str) -> dict[str, object]:  # in a worker thread
    return views.package_info(app_of(request).packages.get(pkg_id))


@router.patch("/vnf_packages/{pkg_id}")
async def modify_package(request: Request, pkg_id: str) -> dict[str, object]:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise BadRequest("VnfPkgInfoModifications must be a JSON object")
    header = request.headers.get("if-match")

    def expect(pkg: VnfPackage) -> None:  # 412 and no change when it does not match
        if_match(header, lambda: views.package_info(pkg))

    return await off_loop(app_of(request).packages.modify, pkg_id, body, expect)


@router.delete("/vnf_packages/{pkg_id}", status_code=204)
async def delete_package(request: Request, pkg_id: str) -> Response:
    await off_loop(app_of(request).packages.delete, pkg_id)
    return Response(status_code=204)


@router.put("/vnf_packages/{pkg_id}/package_content", status_code=202)
async def upload_content(request: Request, pkg_id: str) -> Response:
    app = app_of(request)
    await off_loop(app.packages.get, pkg_id)  # 404 before reading a large body
    limit = app.settings.max_package_size
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        from vnfm.domain.errors import PayloadTooLarge

        raise PayloadTooLarge(f"package content of {declared} bytes is over the limit of {limit}")
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() not in _CONTENT_TYPES:
        raise UnsupportedMediaType(f"Content-Type {ctype[:80]}: send the CSAR as application/zip (or "
                                   "application/octet-stream, or multipart/form-data with a file part)")
    data = await read_limited(request.stream(), limit, "package content")
    if ctype.startswith("multipart/form-data"):
        data = _first_multipart_file(data, ctype)
    if not data:
        raise BadRequest("the package content is empty; send the CSAR zip as the body")
    await off_loop(app.packages.upload, pkg_id, data)  # reading and checking a CSAR takes a while
    return Response(status_code=202)


@router.post("/vnf_packages/{pkg_id}/package_content/upload_from_uri", status_code=202)
async def upload_from_uri(request: Request, pkg_id: str) -> Response:
    await app_of(request).packages.upload_from_uri(pkg_id, await json_body(request))
    return Response(status_code=202)


def _first_multipart_file(body: bytes, ctype: str) -> bytes:
    """python-tackerclient uploads with multipart/form-data (field 'file')."""
    from email.parser import BytesParser
    from email.policy import HTTP

    msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    for part in msg.iter_parts():
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            return payload
    raise BadRequest("multipart upload has no file part")


@router.get("/vnf_packages/{pkg_id}/package_content")
async def fetch_content(request: Request, pkg_id: str) -> Response:
    return ranged(request, app_of(request).packages.content(pkg_id), "application/zip")


@router.get("/vnf_packages/{pkg_id}/vnfd")
async def fetch_vnfd(request: Request, pkg_id: str) -> Response:
    accept = request.headers.get("accept", "application/zip")
    svc = app_of(request).packages
    if "application/zip" in accept or "*/*" in accept:
        data, media = svc.vnfd_archive(pkg_id)
        return Response(data, media_type=media)
    if "text/plain" in accept:
        return PlainTextResponse(svc.vnfd_text(pkg_id))
    raise NotAcceptable(f"Accept {accept!r}: the VNFD is served as text/plain or application/zip")


@router.get("/vnf_packages/{pkg_id}/artifacts/{artifact_path:path}")
async def fetch_artifact(request: Request, pkg_id: str, artifact_path: str) -> Response:
    return ranged(request, app_of(request).packages.artifact(pkg_id, artifact_path), "application/octet-stream")


# ------------------------------------------------------------------ subscriptions (9.4.8, 9.4.9)
add_subscription_routes(router, "/subscriptions", "vnfpkgm", "show_pkgm_subscription")
