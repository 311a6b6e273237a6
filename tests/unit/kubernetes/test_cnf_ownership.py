"""CNFs own their objects (issue 22, item 3), on a Kubespray cluster of the simulated cloud: every
object a CNF applies carries its instance id; a second CNF of the same package is refused at
request time (422 naming the owner) in the first one's namespace and coexists in another one
(`additionalParams.namespace`); when the clash only shows while applying, the operation fails
naming the owner and nothing of the other instance changes; scale, heal and terminate of one CNF
leave the other's objects alone."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from vnfm.adapters.infra.kubernetes import KubernetesInfraDriver
from vnfm.adapters.kube import client as kube
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import OpState
from vnfm.packaging.csar_files import build_csar
from vnfm.packaging.k8s_manifests import OWNER_LABEL

from .conftest import K8s
from .test_cnf import CNF_FILES, PACKAGES, cluster, cnf_body, frontends


def test_the_namespace_parameter_places_objects_whose_manifest_names_none(tmp_path: Path) -> None:
    from vnfm.packaging import k8s_manifests

    class Dir:
        def __init__(self, root: Path) -> None:
            self.root = root

        def read(self, path: str) -> bytes:
            return (self.root / path).read_bytes()

        def exists(self, path: str) -> bool:
            return (self.root / path).is_file()

    params = {"lcm-kubernetes-def-files": list(CNF_FILES), "namespace": "tenant-b"}
    named = k8s_manifests.for_instance(Dir(PACKAGES / "cnf_nodeport"), params, "inst-1")
    assert {m.namespace for m in named} == {"default"}  # Tacker's sample names `namespace: default`
    assert all(m.obj["metadata"]["labels"][OWNER_LABEL] == "inst-1" for m in named)
    pkg_dir = tmp_path / "p"
    shutil.copytree(PACKAGES / "cnf_nodeport", pkg_dir)
    _strip_namespaces(pkg_dir)
    assert {m.namespace for m in k8s_manifests.for_instance(Dir(pkg_dir), params, "inst-1")} == {"tenant-b"}
    with pytest.raises(UnprocessableEntity, match="additionalParams.namespace must be"):
        k8s_manifests.for_instance(Dir(pkg_dir), {**params, "namespace": 7}, "inst-1")


def _strip_namespaces(pkg_dir: Path) -> None:
    for f in (pkg_dir / "Files" / "kubernetes").glob("*.yaml"):
        f.write_text("".join(line for line in f.read_text().splitlines(keepends=True)
                             if line.strip() != "namespace: default"))


def onboard_without_namespaces(k8s: K8s, tmp_path: Path) -> str:
    """Tacker's CNF sample with manifests that name no namespace (its own name `default`: then
    `additionalParams.namespace` does not apply, as in Tacker)."""
    pkg_dir = tmp_path / "cnf"
    shutil.copytree(PACKAGES / "cnf_nodeport", pkg_dir)
    _strip_namespaces(pkg_dir)
    pkg = k8s.app.packages.create({})
    return str(k8s.app.packages.upload(pkg.id, build_csar(pkg_dir)).vnfd_id)


def _kube(k8s: K8s, vim_id: str, fn: Any) -> Any:
    vim = k8s.app.vims.get(vim_id)
    assert vim is not None
    return kube.call(vim, fn)


def _namespace(k8s: K8s, vim_id: str, name: str) -> None:
    """The operator creates the namespace (as with kubectl), as Tacker's `namespace` requires."""
    _kube(k8s, vim_id, lambda api: client.CoreV1Api(api).create_namespace({"metadata": {"name": name}}))


def _deployment(k8s: K8s, vim_id: str, ns: str) -> dict[str, Any]:
    return dict(_kube(k8s, vim_id, lambda api: api.sanitize_for_serialization(
        client.AppsV1Api(api).read_namespaced_deployment("vdu1-simple", ns))))


def _pods(k8s: K8s, vim_id: str, ns: str) -> list[str]:
    return sorted(_kube(k8s, vim_id, lambda api: [p.metadata.name for p in client.CoreV1Api(api).list_namespaced_pod(
        ns, label_selector="app=webserver").items]))


async def test_two_cnfs_of_one_package_coexist_in_their_namespaces_and_never_touch_each_other(
        k8s: K8s, tmp_path: Path) -> None:
    app = k8s.app
    cluster_id, vim_id, lb_ip = await cluster(k8s)
    vnfd = onboard_without_namespaces(k8s, tmp_path)
    a = app.instances.create({"vnfdId": vnfd})
    await k8s.done(app.instances.instantiate(a.id, cnf_body(vim_id, lb_ip)))
    dep = _deployment(k8s, vim_id, "default")
    assert dep["metadata"]["labels"][OWNER_LABEL] == a.id
    assert dep["spec"]["template"]["metadata"]["labels"][OWNER_LABEL] == a.id

    # ---- the same package again in the same namespace: refused when the request arrives
    b = app.instances.create({"vnfdId": vnfd})
    with pytest.raises(UnprocessableEntity, match=f"Deployment 'default/vdu1-simple' belongs to VNF instance {a.id}"):
        app.instances.instantiate(b.id, cnf_body(vim_id, lb_ip))
    assert app.instances.get(b.id).lock_op_id is None
    with pytest.raises(UnprocessableEntity, match="additionalParams.namespace must be a lowercase RFC 1123 name"):
        app.instances.instantiate(b.id, cnf_body(vim_id, lb_ip, namespace="Not_A_Name"))

    # ---- in its own namespace it coexists (its fixed NodePort 30422 is the cluster's: not in this body)
    _namespace(k8s, vim_id, "tenant-b")
    body = cnf_body(vim_id, lb_ip, namespace="tenant-b")
    body["additionalParams"]["lcm-kubernetes-def-files"] = ["Files/kubernetes/deployment.yaml",
                                                            "Files/kubernetes/service_without_nodeport.yaml"]
    a_fronts = frontends(k8s, cluster_id)
    await k8s.done(app.instances.instantiate(b.id, body))
    assert _deployment(k8s, vim_id, "tenant-b")["metadata"]["labels"][OWNER_LABEL] == b.id
    # B's NodePort is its own Service's, in its namespace; A's frontends stay
    b_port = _kube(k8s, vim_id, lambda api: client.CoreV1Api(api).read_namespaced_service(
        "nginx-service", "tenant-b").spec.ports[0].node_port)
    assert set(frontends(k8s, cluster_id)) == {*a_fronts, str(b_port)}
    assert app.instances.get(b.id).driver_state["cnf-nodeport"]["frontends"][0]["name"].startswith(
        "tenant-b.nginx-service.")
    a_pods = _pods(k8s, vim_id, "default")
    [b_vnfc] = app.instances.get(b.id).resources.vnfcs
    assert b_vnfc.metadata["namespace"] == "tenant-b" and b_vnfc.server_id not in a_pods

    # ---- scale and heal of B act on B's objects; terminate of B leaves A as it was
    before_a = _deployment(k8s, vim_id, "default")["metadata"]["resourceVersion"]
    await k8s.done(app.instances.scale(b.id, {"type": "SCALE_OUT", "aspectId": "vdu1_aspect", "numberOfSteps": 1}))
    assert len(app.instances.get(b.id).resources.vnfcs) == 2 and len(app.instances.get(a.id).resources.vnfcs) == 1
    await k8s.done(app.instances.heal(b.id, {"vnfcInstanceId": [b_vnfc.id]}))
    await k8s.done(app.instances.terminate(b.id, {"terminationType": "GRACEFUL"}))
    assert frontends(k8s, cluster_id) == a_fronts
    assert _pods(k8s, vim_id, "default") == a_pods
    assert _deployment(k8s, vim_id, "default")["metadata"]["resourceVersion"] == before_a
    assert not _pods(k8s, vim_id, "tenant-b")


async def test_a_clash_seen_only_while_applying_fails_naming_the_owner_and_changes_nothing_of_it(
        k8s: K8s, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    app = k8s.app
    _cluster_id, vim_id, lb_ip = await cluster(k8s)
    vnfd = onboard_without_namespaces(k8s, tmp_path)
    a = app.instances.create({"vnfdId": vnfd})
    await k8s.done(app.instances.instantiate(a.id, cnf_body(vim_id, lb_ip)))
    before = _deployment(k8s, vim_id, "default")["metadata"]["resourceVersion"]
    a_pods = _pods(k8s, vim_id, "default")
    # as if A's objects appeared between B's request and B's apply
    monkeypatch.setattr(KubernetesInfraDriver, "check_instantiate", lambda self, ctx: None)
    b = app.instances.create({"vnfdId": vnfd})
    body = cnf_body(vim_id, lb_ip)
    body["additionalParams"]["lcm-kubernetes-def-files"] = ["Files/kubernetes/deployment.yaml"]
    occ = await k8s.wait(app.instances.instantiate(b.id, body))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert f"Deployment 'default/vdu1-simple' belongs to VNF instance {a.id}: not changed" in occ.error["detail"]
    assert _deployment(k8s, vim_id, "default")["metadata"]["resourceVersion"] == before
    # its rollback deletes nothing of A's
    occ = await k8s.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.ROLLED_BACK, occ.error
    assert _pods(k8s, vim_id, "default") == a_pods
    assert _deployment(k8s, vim_id, "default")["metadata"]["resourceVersion"] == before
    said = " | ".join(e["message"] for e in app.instances.op_get(occ.id).events)
    assert f"belongs to VNF instance {a.id}: not deleted" in said
