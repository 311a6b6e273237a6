"""Tacker's VIM API (`/v1.0/vims`), the routes python-tackerclient's `openstack vim list / show /
register / set / delete` use, over vnfm's VIM registry.

Tacker's shapes: `{"vim": {...}}` / `{"vims": [...]}` with `type`, `auth_url`, `vim_project`,
`auth_cred`, `placement_attr`, `status`; errors as `{"TackerError": {"type", "message", "detail"}}`.
The legacy client appends `.json` to every path. Secrets in `auth_cred` come back as `***` (Tacker
masks them the same way); a URL's credentials are masked too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from vnfm.domain.errors import BadRequest, Conflict, VnfmError
from vnfm.domain.model import Vim
from vnfm.entrypoints.api.common import app_of, json_body
from vnfm.entrypoints.api.routing import Router
from vnfm.service import views
from vnfm.service.vims import normalise_type

router = Router(prefix="/v1.0")

# vnfm accessInfo keys <-> Tacker's auth_cred / vim_project keys (OpenStack)
_OPENSTACK_CRED = {"username": "username", "password": "password", "user_domain_name": "userDomain",
                   "cert_verify": "certVerify"}
# Kubernetes: Tacker's auth_cred keys are stored as they are
_KUBERNETES_CRED = ("username", "password", "bearer_token", "ssl_ca_cert", "oidc_token_url", "client_id",
                    "client_secret")

Handler = Callable[..., Awaitable[Response]]


def _tacker_errors(handler: Handler) -> Handler:
    """VnfmError -> Tacker's error body, which the legacy client turns into its message."""

    @wraps(handler)
    async def wrapped(*args: Any, **kwargs: Any) -> Response:
        try:
            return await handler(*args, **kwargs)
        except VnfmError as exc:
            kind = {400: "BadRequest", 404: "NotFound", 409: "Conflict"}.get(exc.status, type(exc).__name__)
            body = {"TackerError": {"type": kind, "message": exc.detail, "detail": ""}}
            return JSONResponse(body, status_code=exc.status)

    return wrapped


def _vim_id(ref: str) -> str:
    return ref[: -len(".json")] if ref.endswith(".json") else ref


def tacker_view(vim: Vim) -> dict[str, Any]:
    """A vnfm VIM as Tacker shows one (secrets masked)."""
    access = dict(vim.access_info)
    extra = dict(vim.extra)
    auth_url = access.get("authUrl") or access.get("auth_url") or vim.interface_info.get("endpoint") or ""
    if vim.vim_type == "openstack":
        cred = {t: access[v] for t, v in _OPENSTACK_CRED.items() if v in access}
        project = {"name": access.get("project") or access.get("projectName") or "",
                   "project_domain_name": access.get("projectDomain") or ""}
    else:
        cred = {k: access[k] for k in _KUBERNETES_CRED if k in access}
        project = {"name": access.get("project") or extra.get("namespace") or "default"}
    region = access.get("region")
    return {
        "id": vim.id,
        "name": vim.name,
        "tenant_id": access.get("projectId") or "",
        "type": vim.vim_type,
        "description": str(extra.pop("description", "")),
        "auth_url": views.masked(auth_url),
        "vim_project": project,
        "auth_cred": views.masked(cred),
        "placement_attr": {"regions": [region]} if region else {},
        "status": "ACTIVE",
        "is_default": vim.is_default,
        "extra": views.masked(extra),
        "created_at": vim.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        "updated_at": None,
    }


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("vim"), dict):
        raise BadRequest("the body must be a JSON object {\"vim\": {...}}")
    vim: dict[str, Any] = body["vim"]
    for key in ("vim_project", "auth_cred", "extra"):
        if key in vim and not isinstance(vim[key], dict):
            raise BadRequest(f"vim.{key} must be an object")
    return vim


def _access(vim_type: str, body: dict[str, Any], auth_url: str, old: dict[str, Any]) -> dict[str, Any]:
    """accessInfo from Tacker's auth_url / auth_cred / vim_project (over `old` on an update)."""
    access = dict(old)
    access["authUrl"] = auth_url
    cred: dict[str, Any] = body.get("auth_cred") or {}
    project: dict[str, Any] = body.get("vim_project") or {}
    if vim_type == "openstack":
        access.update({v: cred[t] for t, v in _OPENSTACK_CRED.items() if t in cred})
        if project.get("name"):
            access["project"] = project["name"]
        if project.get("project_domain_name"):
            access["projectDomain"] = project["project_domain_name"]
    else:
        access.update({k: cred[k] for k in _KUBERNETES_CRED if k in cred})
        if project.get("name"):
            access["project"] = project["name"]
    return access


def _auth_url(value: Any) -> str:
    url = str(value or "")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadRequest("vim.auth_url must be an absolute http(s) URL")
    return url


def _new_vim(body: dict[str, Any], taken: set[str]) -> Vim:
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise BadRequest("vim.name is required")
    if name in taken:
        raise Conflict(f"a VIM named '{name}' is already registered")
    vim_type = normalise_type(str(body.get("type") or "openstack"))
    if vim_type not in ("openstack", "kubernetes"):
        raise BadRequest("vim.type must be openstack or kubernetes")
    auth_url = _auth_url(body.get("auth_url"))
    cred = body.get("auth_cred") or {}
    if vim_type == "openstack" and not (cred.get("username") and cred.get("password")):
        raise BadRequest("vim.auth_cred needs username and password for an OpenStack VIM")
    if vim_type == "kubernetes" and not (cred.get("bearer_token") or (cred.get("username") and cred.get("password"))):
        raise BadRequest("vim.auth_cred needs bearer_token, or username and password, for a Kubernetes VIM")
    extra = dict(body.get("extra") or {})
    if body.get("description"):
        extra["description"] = str(body["description"])
    return Vim(vim_type=vim_type, name=name, access_info=_access(vim_type, body, auth_url, {}),
               interface_info={"endpoint": auth_url} if vim_type == "kubernetes" else {},
               is_default=bool(body.get("is_default", False)), extra=extra)


def _matches(item: dict[str, Any], request: Request) -> bool:
    for key, wanted in request.query_params.multi_items():
        if key != "fields" and key in item and str(item[key]) != wanted:
            return False
    return True


@router.get("/vims")
@router.get("/vims.json")
@_tacker_errors
async def list_vims(request: Request) -> Response:
    items = [tacker_view(v) for v in app_of(request).vims.list()]
    items = [i for i in items if _matches(i, request)]
    fields = request.query_params.getlist("fields")
    if fields:
        items = [{k: v for k, v in i.items() if k in fields} for i in items]
    return JSONResponse({"vims": items})


@router.post("/vims")
@router.post("/vims.json")
@_tacker_errors
async def register_vim(request: Request) -> Response:
    body = _object(await json_body(request))
    svc = app_of(request).vims
    vim = svc.register(_new_vim(body, {v.name for v in svc.list()}))
    return JSONResponse({"vim": tacker_view(vim)}, status_code=201)


@router.get("/vims/{ref}")
@_tacker_errors
async def show_vim(request: Request, ref: str) -> Response:
    return JSONResponse({"vim": tacker_view(app_of(request).vims.require(_vim_id(ref)))})


@router.put("/vims/{ref}")
@_tacker_errors
async def update_vim(request: Request, ref: str) -> Response:
    body = _object(await json_body(request))
    svc = app_of(request).vims
    vim = svc.require(_vim_id(ref))
    if "type" in body and normalise_type(str(body["type"])) != vim.vim_type:
        raise BadRequest("vim.type cannot be changed")
    changes: dict[str, Any] = {}
    if body.get("name") and body["name"] != vim.name:
        if any(v.name == body["name"] for v in svc.list()):
            raise Conflict(f"a VIM named '{body['name']}' is already registered")
        changes["name"] = str(body["name"])
    if "is_default" in body:
        changes["is_default"] = bool(body["is_default"])
    extra = dict(vim.extra)
    extra.update(body.get("extra") or {})
    if "description" in body:
        extra["description"] = str(body["description"] or "")
    changes["extra"] = extra
    if vim.vim_type in ("openstack", "kubernetes"):
        auth_url = _auth_url(body["auth_url"]) if body.get("auth_url") else str(vim.access_info.get("authUrl", ""))
        changes["access_info"] = _access(vim.vim_type, body, auth_url, vim.access_info)
        if vim.vim_type == "kubernetes":
            changes["interface_info"] = {**vim.interface_info, "endpoint": auth_url}
    updated = svc.update(dataclasses.replace(vim, **changes))
    return JSONResponse({"vim": tacker_view(updated)})


@router.delete("/vims/{ref}")
@_tacker_errors
async def delete_vim(request: Request, ref: str) -> Response:
    app_of(request).vims.delete(_vim_id(ref))
    return Response(status_code=204)
