"""The simulated Kubernetes API's ServiceAccount tokens, PodDisruptionBudgets, OpenAPI v3 documents
with strict field validation, and protobuf request bodies, through `routes.answer` (no listener)."""

from __future__ import annotations

import base64
import json
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.routes import Answer, Request, answer
from vnfm.adapters.infra.simulator.twin.base import KEY, empty, sha

TOKEN = "admin-token"
ID = "cluster-1"


class Sim:
    def __init__(self) -> None:
        st = empty()
        st["cluster"] = {"ca_pem": "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"}
        for name in ("w1", "w2"):
            st["nodes"][name] = {"name": name, "role": "worker", "server_id": name, "addresses": [], "labels": {},
                                 "cordoned": False, "ready": True, "ready_at": 0.0}
        st["service_accounts"]["kube-system/admin"] = {"token_sha256": sha(TOKEN)}
        self.ex: dict[str, Any] = {KEY: st}

    def extras(self, _id: str) -> dict[str, Any]:
        return json.loads(json.dumps(self.ex))

    def update_extras(self, _id: str, fn: Any) -> Any:
        ex = self.extras(_id)
        out = fn(ex)
        self.ex = ex
        return out


def call(sim: Sim, method: str, path: str, body: Any = None, token: str = TOKEN, query: dict[str, str] | None = None,
         ctype: str = "application/json") -> Answer:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
    return answer(sim, ID, Request(method, path, query or {}, {"authorization": f"Bearer {token}",
                                                               "content-type": ctype}, raw), "https://x")


def test_token_secret_is_issued_authenticates_and_is_revoked_with_its_secret() -> None:
    sim = Sim()
    assert call(sim, "POST", "/api/v1/namespaces/kube-system/serviceaccounts",
                {"metadata": {"name": "vim"}}).status == 201
    secret = {"type": "kubernetes.io/service-account-token",
              "metadata": {"name": "vim-token", "annotations": {"kubernetes.io/service-account.name": "vim"}}}
    assert call(sim, "POST", "/api/v1/namespaces/kube-system/secrets", secret).status == 201
    got = call(sim, "GET", "/api/v1/namespaces/kube-system/secrets/vim-token").body
    token = base64.b64decode(got["data"]["token"]).decode()
    assert base64.b64decode(got["data"]["namespace"]) == b"kube-system"
    assert b"BEGIN CERTIFICATE" in base64.b64decode(got["data"]["ca.crt"])
    assert call(sim, "GET", "/api/v1/nodes", token=token).status == 200
    # a token Secret without its account annotation is refused, naming the field
    bad = call(sim, "POST", "/api/v1/namespaces/kube-system/secrets",
               {"type": "kubernetes.io/service-account-token", "metadata": {"name": "x"}})
    assert bad.status == 422 and "kubernetes.io/service-account.name" in bad.body["message"]
    # deleting the account deletes its token Secret, and the token stops working
    assert call(sim, "DELETE", "/api/v1/namespaces/kube-system/serviceaccounts/vim").status == 200
    assert call(sim, "GET", "/api/v1/nodes", token=token).status == 401
    assert call(sim, "GET", "/api/v1/namespaces/kube-system/secrets/vim-token").status == 404


def _web(sim: Sim, replicas: int, budget: dict[str, Any]) -> list[str]:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    assert call(sim, "POST", "/apis/apps/v1/namespaces/default/deployments", dep).status == 201
    pdb = {"metadata": {"name": "web"}, "spec": {**budget, "selector": {"matchLabels": {"app": "web"}}}}
    assert call(sim, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb).status == 201
    return [p["metadata"]["name"] for p in call(sim, "GET", "/api/v1/namespaces/default/pods").body["items"]]


def test_eviction_is_refused_with_429_while_the_budget_allows_no_disruption() -> None:
    sim = Sim()
    pods = _web(sim, 2, {"maxUnavailable": 0})
    st = call(sim, "GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web").body["status"]
    assert (st["expectedPods"], st["currentHealthy"], st["desiredHealthy"], st["disruptionsAllowed"]) == (2, 2, 2, 0)
    ev = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pods[0], "namespace": "default"}}
    refused = call(sim, "POST", f"/api/v1/namespaces/default/pods/{pods[0]}/eviction", ev)
    assert refused.status == 429 and refused.body["reason"] == "TooManyRequests"
    assert refused.body["details"]["causes"][0]["message"] == "The disruption budget web needs 2 healthy pods and " \
                                                                "has 2 currently"
    assert call(sim, "PATCH", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web",
                {"spec": {"maxUnavailable": "50%"}}, ctype="application/merge-patch+json").status == 200
    assert call(sim, "POST", f"/api/v1/namespaces/default/pods/{pods[0]}/eviction", ev).status == 201
    both = call(sim, "PATCH", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web",
                {"spec": {"minAvailable": 1}}, ctype="application/merge-patch+json")
    assert both.status == 422 and "cannot be both set" in both.body["message"]


def test_openapi_v3_announces_field_validation_and_strict_refuses_unknown_fields() -> None:
    sim = Sim()
    root = call(sim, "GET", "/openapi/v3").body["paths"]
    assert root["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")
    assert "apis/policy/v1" in root and "apis/rbac.authorization.k8s.io/v1" in root
    doc = call(sim, "GET", "/openapi/v3/api/v1").body
    patch = doc["paths"]["/api/v1/persistentvolumes/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "PersistentVolume"}
    assert {"name": "fieldValidation", "in": "query"}.items() <= patch["parameters"][0].items()
    assert call(sim, "GET", "/openapi/v2").status == 404
    pv = {"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "1Gi"}, "nfs": {"server": "s", "paht": "/x"}}}
    strict = call(sim, "POST", "/api/v1/persistentvolumes", pv, query={"fieldValidation": "Strict"})
    assert strict.status == 400 and 'unknown field "spec.nfs.paht"' in strict.body["message"]
    assert call(sim, "GET", "/api/v1/persistentvolumes/pv").status == 404  # nothing was created
    assert call(sim, "POST", "/api/v1/persistentvolumes", pv).status == 201  # Ignore: as sent


def test_protobuf_bodies_decoded_or_refused_naming_the_field() -> None:
    sim = Sim()
    meta = b"\x0a\x03vim\x1a\x0bkube-system"
    sa = b"\x0a" + bytes([len(meta)]) + meta
    env = b"\x0a\x14\x0a\x02v1\x12\x0eServiceAccount\x12" + bytes([len(sa)]) + sa
    ok = call(sim, "POST", "/api/v1/namespaces/kube-system/serviceaccounts", b"k8s\x00" + env,
              ctype="application/vnd.kubernetes.protobuf")
    assert ok.status == 201 and ok.body["metadata"]["name"] == "vim"
    meta15 = meta + b"\x78\x01"  # field 15 of ObjectMeta, set
    unknown = b"\x0a" + bytes([len(meta15)]) + meta15
    sa2 = b"\x0a\x14\x0a\x02v1\x12\x0eServiceAccount\x12" + bytes([len(unknown)]) + unknown
    refused = call(sim, "POST", "/api/v1/namespaces/kube-system/serviceaccounts", b"k8s\x00" + sa2,
                   ctype="application/vnd.kubernetes.protobuf")
    assert refused.status == 415 and "field 15 of ObjectMeta is not understood" in refused.body["message"]


def test_watch_sends_added_modified_deleted_then_ends() -> None:
    import threading

    from vnfm.adapters.infra.simulator.k8sapi import watch

    sim = Sim()
    path = "/api/v1/namespaces/default/configmaps"
    cm = {"metadata": {"name": "a"}, "data": {"k": "1"}}
    assert call(sim, "POST", path, cm).status == 201
    rv = call(sim, "GET", path).body["metadata"]["resourceVersion"]
    events: list[dict[str, Any]] = []
    stop = threading.Event()

    def lister() -> tuple[int, dict[str, Any]]:
        a = call(sim, "GET", path)
        return a.status, a.body

    t = threading.Thread(target=watch.stream, args=({"resourceVersion": rv}, lister, events.append, stop))
    t.start()
    try:
        call(sim, "POST", path, {"metadata": {"name": "b"}})
        call(sim, "PATCH", f"{path}/a", {"data": {"k": "2"}}, ctype="application/merge-patch+json")
        call(sim, "DELETE", f"{path}/b")  # created and deleted between two looks: not seen at all
        call(sim, "DELETE", f"{path}/a")
        call(sim, "POST", path, {"metadata": {"name": "c"}})
        for _ in range(100):
            if [e for e in events if e["type"] == "ADDED"]:
                break
            threading.Event().wait(0.05)
    finally:
        stop.set()
        t.join(5)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "c"), ("DELETED", "a")]
    # an older resourceVersion: 410, the client lists again
    gone: list[dict[str, Any]] = []
    watch.stream({"resourceVersion": "1"}, lister, gone.append, threading.Event())
    assert gone[0]["type"] == "ERROR" and gone[0]["object"]["code"] == 410
    # a streaming list: every object, then the bookmark ending the initial events
    initial: list[dict[str, Any]] = []
    stopped = threading.Event()
    stopped.set()
    watch.stream({"sendInitialEvents": "true"}, lister, initial.append, stopped)
    assert [e["type"] for e in initial] == ["ADDED", "BOOKMARK"]
    assert initial[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
