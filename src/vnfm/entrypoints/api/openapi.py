"""The OpenAPI document as the API really answers, and the pages that show it without a CDN.

The routes read their bodies themselves (json_body: strict SOL003/SOL005 models in
service/requests.py) and answer with plain Responses, so FastAPI's generated document knows
neither the request bodies nor the 202s, and lists a 422 that is never sent. `document` completes
it from three tables kept next to each other here: the body each route takes (the request models'
own JSON Schema), the routes that answer 202 Accepted, and the errors (ProblemDetails, SOL013 6.4)
every route may answer. tests/api/test_openapi.py walks every route against them.

/docs (Swagger UI) and /redoc are served from the assets of the fastapi-offline wheel (a
dependency for its assets only: the Swagger UI and ReDoc bundles, kept current on PyPI, with no
JavaScript tool chain here), never from a CDN.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse
from pydantic import BaseModel

from vnfm.domain.errors import NotFound
from vnfm.entrypoints.api.problem import PROBLEM_JSON
from vnfm.entrypoints.api.routing import Router
from vnfm.entrypoints.api.v2 import bodies as v2
from vnfm.service import requests as req

ASSETS = Path(fastapi_offline.__file__).parent / "static"
ASSET_TYPES = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css",
               "redoc.standalone.js": "text/javascript", "favicon.png": "image/png"}

_INST = "/vnflcm/v1/vnf_instances/{inst_id}"
_OCC = "/vnflcm/v1/vnf_lcm_op_occs/{op_id}"
_PKG = "/vnfpkgm/v1/vnf_packages/{pkg_id}"
_INST2 = "/vnflcm/v2/vnf_instances/{inst_id}"
_OCC2 = "/vnflcm/v2/vnf_lcm_op_occs/{op_id}"

_OBJECT: dict[str, Any] = {"type": "object"}
_VIM = {"type": "object", "required": ["vimType", "accessInfo"], "properties": {
    "name": {"type": "string"}, "vimType": {"type": "string", "example": "openstack"},
    "accessInfo": {"type": "object"}, "interfaceInfo": {"type": "object"}, "isDefault": {"type": "boolean"}},
    "description": "A VIM to deploy on (vnfm's registry; secrets are stored encrypted and never returned)."}
_TACKER_VIM = {"type": "object", "required": ["vim"], "properties": {"vim": {"type": "object"}},
               "description": "Tacker's /v1.0/vims body: {\"vim\": {type, auth_url, auth_cred, vim_project, ...}}"}
_PKG_CREATE = {"type": "object", "properties": {"userDefinedData": {"type": "object"}},
               "description": "CreateVnfPkgInfoRequest (SOL005 9.5.2.2)"}
_PKG_PATCH = {"type": "object", "properties": {"operationalState": {"enum": ["ENABLED", "DISABLED"]},
                                               "userDefinedData": {"type": "object"}},
              "description": "VnfPkgInfoModifications (SOL005 9.5.2.3), as a JSON merge patch"}
_ZIP = {"type": "string", "format": "binary", "description": "the VNF package (CSAR zip)"}

# (method, route template) -> the body it takes: a request model, or a JSON Schema (media type)
BODIES: dict[tuple[str, str], type[BaseModel] | tuple[str, dict[str, Any]]] = {
    ("POST", "/vnflcm/v1/vnf_instances"): req.CreateVnfRequest,
    ("PATCH", _INST): req.VnfInfoModificationRequest,
    ("POST", f"{_INST}/instantiate"): req.InstantiateVnfRequest,
    ("POST", f"{_INST}/scale"): req.ScaleVnfRequest,
    ("POST", f"{_INST}/heal"): req.HealVnfRequest,
    ("POST", f"{_INST}/terminate"): req.TerminateVnfRequest,
    ("POST", f"{_INST}/change_vnfpkg"): req.ChangeCurrentVnfPkgRequest,
    ("POST", f"{_OCC}/cancel"): req.CancelMode,
    ("POST", "/vnflcm/v1/subscriptions"): req.LccnSubscriptionRequest,
    ("POST", "/vnfpkgm/v1/subscriptions"): req.PkgmSubscriptionRequest,
    ("POST", "/vnfpkgm/v1/vnf_packages"): ("application/json", _PKG_CREATE),
    ("PATCH", _PKG): ("application/merge-patch+json", _PKG_PATCH),
    ("PUT", f"{_PKG}/package_content"): ("application/zip", _ZIP),
    ("POST", f"{_PKG}/package_content/upload_from_uri"): req.UploadVnfPkgFromUriRequest,
    ("POST", "/vnfm/v1/vims"): ("application/json", _VIM),
    ("POST", "/v1.0/vims"): ("application/json", _TACKER_VIM),
    ("POST", "/v1.0/vims.json"): ("application/json", _TACKER_VIM),
    ("PUT", "/v1.0/vims/{ref}"): ("application/json", _TACKER_VIM),
    ("POST", "/sim/v1/faults"): req.SimFaultsRequest,
    # SOL003 v3.3.1 (/vnflcm/v2): its own models (entrypoints/api/v2/bodies.py), named ...V2 here
    ("POST", "/vnflcm/v2/vnf_instances"): v2.CreateVnfRequest,
    ("PATCH", _INST2): v2.VnfInfoModificationRequest,
    ("POST", f"{_INST2}/instantiate"): v2.InstantiateVnfRequest,
    ("POST", f"{_INST2}/scale"): v2.ScaleVnfRequest,
    ("POST", f"{_INST2}/heal"): v2.HealVnfRequest,
    ("POST", f"{_INST2}/terminate"): v2.TerminateVnfRequest,
    ("POST", f"{_INST2}/change_vnfpkg"): v2.ChangeCurrentVnfPkgRequest,
    ("POST", f"{_OCC2}/cancel"): req.CancelMode,
    ("POST", "/vnflcm/v2/subscriptions"): req.LccnSubscriptionRequestV2,
    # SOL003 fault management (/vnffm/v1)
    ("PATCH", "/vnffm/v1/alarms/{alarm_id}"): req.AlarmModifications,
    ("POST", "/vnffm/v1/subscriptions"): req.FmSubscriptionRequest,
}
# POSTs that take no body (one with content is 400, not ignored)
NO_BODY = {("POST", f"{occ}/{task}") for occ in (_OCC, _OCC2) for task in ("retry", "rollback", "fail")} | {
    ("POST", "/vnfm/v1/vnf_instances/{inst_id}/renew_certificates")}
# the routes that start work and answer 202 Accepted (the LCM ones with the occurrence's Location)
ACCEPTED: dict[tuple[str, str], str] = {
    ("PATCH", _INST): "the modification's vnfLcmOpOcc is in Location",
    ("POST", f"{_INST}/instantiate"): "the vnfLcmOpOcc is in Location",
    ("POST", f"{_INST}/scale"): "the vnfLcmOpOcc is in Location",
    ("POST", f"{_INST}/heal"): "the vnfLcmOpOcc is in Location",
    ("POST", f"{_INST}/terminate"): "the vnfLcmOpOcc is in Location",
    ("POST", f"{_INST}/change_vnfpkg"): "the vnfLcmOpOcc is in Location",
    ("POST", f"{_OCC}/retry"): "the retried vnfLcmOpOcc is in Location",
    ("POST", f"{_OCC}/rollback"): "the vnfLcmOpOcc is in Location",
    ("POST", f"{_OCC}/cancel"): "the cancellation is under way",
    **{("POST", f"{_INST2}/{task}"): "the vnfLcmOpOcc is in Location"
       for task in ("instantiate", "scale", "heal", "terminate", "change_vnfpkg")},
    ("PATCH", _INST2): "the modification's vnfLcmOpOcc is in Location",
    ("POST", f"{_OCC2}/retry"): "the retried vnfLcmOpOcc is in Location",
    ("POST", f"{_OCC2}/rollback"): "the vnfLcmOpOcc is in Location",
    ("POST", f"{_OCC2}/cancel"): "the cancellation is under way",
    ("POST", "/vnfm/v1/vnf_instances/{inst_id}/renew_certificates"): "the renewing HEAL vnfLcmOpOcc is in Location",
    ("PUT", f"{_PKG}/package_content"): "onboarding runs (follow onboardingState)",
    ("POST", f"{_PKG}/package_content/upload_from_uri"): "fetching and onboarding run",
}
_ERRORS = {400: "Bad Request: a malformed or refused request (the detail names the attribute)",
           401: "Unauthorized: no or a bad token", 403: "Forbidden: the role does not allow it",
           404: "Not Found", 406: "Not Acceptable: nothing the Accept header admits",
           409: "Conflict: the resource's state does not allow it",
           412: "Precondition Failed: If-Match does not name the current ETag",
           415: "Unsupported Media Type", 500: "Internal Server Error",
           503: "Service Unavailable: the database was too busy (Retry-After)"}
PROBLEM_SCHEMA = {"type": "object", "required": ["status", "detail"], "description": "SOL013 6.4 ProblemDetails",
                  "properties": {"type": {"type": "string", "format": "uri"}, "title": {"type": "string"},
                                 "status": {"type": "integer"}, "detail": {"type": "string"},
                                 "instance": {"type": "string", "format": "uri"}}}


TACKER_ERROR = {"type": "object", "description": "Tacker's error body (the legacy client's)", "properties": {
    "TackerError": {"type": "object", "properties": {"type": {"type": "string"}, "message": {"type": "string"},
                                                       "detail": {"type": "string"}}}}}
TACKER_CODES = {400, 404, 409}  # answered as Tacker does on /v1.0 (the rest as ProblemDetails)


def errors_of(method: str, path: str) -> list[int]:
    """The ProblemDetails statuses a route may answer."""
    codes = [400, 401, 403, 406, 500, 503]
    if "{" in path:
        codes.append(404)
    if (method, path) in BODIES:
        codes.append(415)
    if method in ("PATCH", "DELETE", "PUT") or (method == "POST" and "{" in path):
        codes.append(409)
    if method == "PATCH":
        codes.append(412)
    return sorted(codes)


def _body(spec: dict[str, Any], method: str, path: str) -> dict[str, Any] | None:
    body = BODIES.get((method, path))
    if body is None:
        return None
    if isinstance(body, tuple):
        media, schema = body
    else:  # v3.3.1's models share v2.6.1's names: theirs are suffixed V2 (with the models they use)
        suffix = "V2" if body.__module__ == v2.__name__ and not body.__name__.endswith("V2") else ""
        name = body.__name__ + suffix
        schema = {"$ref": f"#/components/schemas/{name}"}
        models = body.model_json_schema(ref_template="#/components/schemas/{model}" + suffix)
        spec["components"]["schemas"].update({k + suffix: v for k, v in models.pop("$defs", {}).items()})
        spec["components"]["schemas"][name] = models
        media = "application/merge-patch+json" if method == "PATCH" else "application/json"
    return {"required": True, "content": {media: {"schema": schema}}}


def document(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document of `app`, completed from the tables above."""
    spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    components = spec.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for gone in ("HTTPValidationError", "ValidationError"):
        schemas.pop(gone, None)
    schemas["ProblemDetails"] = PROBLEM_SCHEMA
    schemas["TackerError"] = TACKER_ERROR
    problem = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}
    tacker = {"application/json": {"schema": {"$ref": "#/components/schemas/TackerError"}}}
    for path, operations in spec.get("paths", {}).items():
        for method_lower, op in operations.items():
            method = method_lower.upper()
            responses = op.setdefault("responses", {})
            responses.pop("422", None)
            body = _body(spec, method, path)
            if body is not None:
                op["requestBody"] = body
            elif (method, path) in NO_BODY:
                op["description"] = (op.get("description", "") + "\n\nNo request body (one is refused).").strip()
            if (method, path) in ACCEPTED:
                responses.pop("200", None)
                accepted: dict[str, Any] = {"description": f"Accepted: {ACCEPTED[(method, path)]}"}
                if "Location" in accepted["description"]:
                    accepted["headers"] = {"Location": {"schema": {"type": "string", "format": "uri"}}}
                responses["202"] = accepted
            for code in errors_of(method, path):
                content = tacker if path.startswith("/v1.0/") and code in TACKER_CODES else problem
                responses.setdefault(str(code), {"description": _ERRORS[code], "content": content})
    return spec


def install(app: FastAPI) -> None:
    """Serve the completed document at /openapi.json (built once) and the offline doc pages."""
    cache: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if "doc" not in cache:
            cache["doc"] = document(app)
        return dict(cache["doc"])

    app.openapi = openapi  # type: ignore[method-assign]
    app.include_router(router)


router = Router(include_in_schema=False)
_SAFE = re.compile(r"^[a-z.-]+$")


@router.get("/docs")
def swagger_ui() -> HTMLResponse:
    return get_swagger_ui_html(openapi_url="/openapi.json", title="vnfm API",
                               oauth2_redirect_url="/docs/oauth2-redirect",
                               swagger_js_url="/docs/assets/swagger-ui-bundle.js",
                               swagger_css_url="/docs/assets/swagger-ui.css",
                               swagger_favicon_url="/docs/assets/favicon.png")


@router.get("/docs/oauth2-redirect")
def swagger_ui_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


@router.get("/redoc")
def redoc() -> HTMLResponse:
    return get_redoc_html(openapi_url="/openapi.json", title="vnfm API",
                          redoc_js_url="/docs/assets/redoc.standalone.js",
                          redoc_favicon_url="/docs/assets/favicon.png", with_google_fonts=False)


@router.get("/docs/assets/{name}")
def asset(name: str) -> FileResponse:
    if name not in ASSET_TYPES or not _SAFE.match(name):
        raise NotFound(f"no asset {name!r} (assets: {', '.join(sorted(ASSET_TYPES))})")
    return FileResponse(ASSETS / name, media_type=ASSET_TYPES[name])
