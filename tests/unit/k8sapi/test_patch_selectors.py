"""The simulated Kubernetes API's PATCH bodies and selectors, as clients send them."""

from __future__ import annotations

import pytest

from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError
from vnfm.adapters.infra.simulator.k8sapi.patch import apply_patch
from vnfm.adapters.infra.simulator.k8sapi.selectors import field_matcher, label_matcher, selector_matches

DEPLOY = {"metadata": {"name": "web", "labels": {"a": "1", "b": "2"}},
          "spec": {"replicas": 1, "template": {"spec": {"containers": [
              {"name": "app", "image": "nginx:1", "env": [{"name": "X", "value": "1"}]},
              {"name": "side", "image": "busybox"}]}}}}

SMP = "application/strategic-merge-patch+json"


def test_strategic_merge_merges_containers_by_name() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}
    out = apply_patch(DEPLOY, patch, SMP)
    cs = out["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in cs] == ["app", "side"]
    assert cs[0]["image"] == "nginx:2" and cs[0]["env"] == [{"name": "X", "value": "1"}]
    assert DEPLOY["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1"  # not changed in place


def test_strategic_merge_delete_directive_and_merge_patch_replaces_lists() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}}
    out = apply_patch(DEPLOY, patch, SMP)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["app"]
    only = {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "x"}]}}}}
    merged = apply_patch(DEPLOY, only, "application/merge-patch+json")
    assert [c["name"] for c in merged["spec"]["template"]["spec"]["containers"]] == ["only"]
    out = apply_patch(DEPLOY, {"metadata": {"labels": {"b": None}}}, "application/merge-patch+json")
    assert out["metadata"]["labels"] == {"a": "1"}


def test_json_patch() -> None:
    ops = [{"op": "replace", "path": "/spec/replicas", "value": 3},
           {"op": "add", "path": "/metadata/labels/c", "value": "3"},
           {"op": "remove", "path": "/metadata/labels/a"}]
    out = apply_patch(DEPLOY, ops, "application/json-patch+json")
    assert out["spec"]["replicas"] == 3 and out["metadata"]["labels"] == {"b": "2", "c": "3"}
    with pytest.raises(ApiError):
        apply_patch(DEPLOY, [{"op": "remove", "path": "/no/such"}], "application/json-patch+json")


def test_label_and_field_selectors() -> None:
    labels = {"app": "web", "tier": "front"}
    assert label_matcher("app=web,tier!=back")(labels)
    assert label_matcher("app in (web,api),!canary")(labels)
    assert not label_matcher("app notin (web)")(labels)
    assert label_matcher("tier")(labels) and not label_matcher("zone")(labels)
    assert selector_matches({"matchLabels": {"app": "web"},
                             "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}, labels)
    assert not selector_matches({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, labels)
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": {"nodeName": "n1"},
           "status": {"phase": "Running"}}
    assert field_matcher("spec.nodeName=n1,status.phase!=Failed")(pod)
    assert not field_matcher("metadata.namespace=kube-system")(pod)
