"""Requests to the simulated API of one cluster, from path to answer: discovery (/api, /apis,
/version, the resource lists), the resource paths of the served kinds, bearer-token
authentication against the twin's ServiceAccount token hashes, and one simulated-cloud
transaction per call (a failed call, or a dry run, changes nothing)."""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass, field
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi import openapi, protobuf
from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError
from vnfm.adapters.infra.simulator.k8sapi.kinds import GROUPS, group_list, kind_of, resource_list
from vnfm.adapters.infra.simulator.k8sapi.ops import Call, run
from vnfm.adapters.infra.simulator.k8sapi.tables import table
from vnfm.adapters.infra.simulator.twin.base import KEY, empty, sha
from vnfm.adapters.infra.simulator.twin.certs import api_down

HEALTH = ("/healthz", "/livez", "/readyz")


@dataclass
class Answer:
    status: int
    body: Any
    content_type: str = "application/json"

    def encoded(self) -> bytes:
        return self.body.encode() if isinstance(self.body, str) else json.dumps(self.body).encode()


@dataclass
class Request:
    method: str
    path: str  # below /clusters/<id>
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""


class _DryRun(Exception):  # noqa: N818 - a control-flow signal that rolls the transaction back
    def __init__(self, answer: tuple[int, dict[str, Any]]) -> None:
        super().__init__("dry run")
        self.answer = answer


def _state(extras: dict[str, Any]) -> dict[str, Any]:
    st = extras.setdefault(KEY, empty())
    for k, v in empty().items():
        st.setdefault(k, v)
    return st


def _authorised(st: dict[str, Any], headers: dict[str, str]) -> bool:
    auth = headers.get("authorization", "")
    if not auth.lower().startswith("bearer ") or len(auth) < 8:
        return False
    digest = sha(auth[7:].strip())
    return any(hmac.compare_digest(digest, str(sa.get("token_sha256") or ""))
               for sa in (st.get("service_accounts") or {}).values() if isinstance(sa, dict))


def _discovery(st: dict[str, Any], path: str, server: str) -> Answer | None:
    if path == "/version":
        v = str((st.get("cluster") or {}).get("version") or "1.30.0").lstrip("v")
        major, minor = (v.split(".") + ["0", "0"])[:2]
        return Answer(200, {"major": major, "minor": minor, "gitVersion": f"v{v}", "gitCommit": "simulated",
                            "gitTreeState": "clean", "buildDate": "2024-01-01T00:00:00Z", "goVersion": "go1.22",
                            "compiler": "gc", "platform": "linux/amd64"})
    if path == "/api":
        return Answer(200, {"kind": "APIVersions", "versions": ["v1"],
                            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server}]})
    if path == "/apis":
        return Answer(200, group_list())
    parts = [p for p in path.split("/") if p]
    if len(parts) == 2 and parts[0] == "apis" and parts[1] in GROUPS:
        vs = [{"groupVersion": f"{parts[1]}/{v}", "version": v} for v in GROUPS[parts[1]]]
        return Answer(200, {"kind": "APIGroup", "apiVersion": "v1", "name": parts[1], "versions": vs,
                            "preferredVersion": vs[0]})
    if parts == ["api", "v1"] or (len(parts) == 3 and parts[0] == "apis"):
        found = resource_list(*(("", "v1") if parts[0] == "api" else (parts[1], parts[2])))
        return Answer(200, found) if found is not None else None
    return None


def _call(req: Request) -> Call:
    parts = [p for p in req.path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    kind = kind_of(group, version, rest[0]) if rest else None
    if kind is None or len(rest) > 3:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    body: Any = None
    ctype = req.headers.get("content-type", "application/json")
    if req.body and ctype.startswith(protobuf.CONTENT_TYPE):
        body, ctype = protobuf.decode(req.body), "application/json"
    elif req.body:
        try:
            body = json.loads(req.body)
        except ValueError:
            raise ApiError(415, "UnsupportedMediaType", "the body must be JSON") from None
    return Call(method=req.method, kind=kind, namespace=namespace, name=rest[1] if len(rest) > 1 else None,
                sub=rest[2] if len(rest) > 2 else None, query=req.query, body=body,
                content_type=ctype)


def answer(sim: Any, instance_id: str, req: Request, server: str) -> Answer:
    """The answer of the simulated API of VNF instance `instance_id`'s cluster to `req`."""
    try:
        extras = sim.extras(instance_id)
    except Exception:  # an instance id the simulated cloud cannot read
        extras = {}
    if req.path in HEALTH:
        down = isinstance(extras.get(KEY), dict) and api_down(_state(dict(extras)))
        return Answer(503, "not ready", "text/plain") if down else Answer(200, "ok", "text/plain")
    st = extras.get(KEY)
    if not isinstance(st, dict) or not st.get("service_accounts"):
        return Answer(404, ApiError(404, "NotFound", f"no simulated Kubernetes cluster {instance_id}").status())
    if api_down(_state(dict(extras))):
        return Answer(503, ApiError(503, "ServiceUnavailable", "no API server of the cluster answers: every "
                                    "control plane is restarting").status())
    if not _authorised(st, req.headers):
        return Answer(401, ApiError(401, "Unauthorized", "Unauthorized").status())
    try:
        found = _discovery(_state(dict(extras)), req.path, server)
        if found is not None:
            return found
        if req.path == "/openapi/v3":
            return Answer(200, openapi.root())
        if req.path.startswith("/openapi/v3/"):
            gv = req.path[len("/openapi/v3/"):].split("/")
            doc = openapi.document(*((gv[1], gv[2]) if gv[0] == "apis" and len(gv) == 3 else ("", gv[-1])))
            if doc is None or gv[0] not in ("api", "apis"):
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return Answer(200, doc)
        if req.path.startswith("/openapi/"):
            raise ApiError(404, "NotFound", "the simulated API serves OpenAPI v3 only (/openapi/v3)")
        call = _call(req)
        if req.query.get("watch") in ("1", "true"):
            raise ApiError(405, "MethodNotAllowed", "a watch is a stream: the listener serves it (server.py)")
        dry = req.query.get("dryRun") == "All"

        def fn(ex: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            result = run(_state(ex), call)
            if dry:
                raise _DryRun(result)
            return result

        try:
            status, body = sim.update_extras(instance_id, fn)
        except _DryRun as d:
            status, body = d.answer
    except ApiError as e:
        return Answer(e.code, e.status())
    if "as=Table" in req.headers.get("accept", "") and status == 200 and body.get("kind") != "Status":
        body = table(call.kind.plural, body)
    return Answer(status, body)
