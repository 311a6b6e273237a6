"""The kubectl node scripts of the cluster drivers (wait_node_ready, label_node, vim_token, apply_pv,
delete_pvs, drain_node, uncordon_node, delete_node) and nfs_client over real SSH on a test host,
with the REAL kubectl against the simulator's Kubernetes API (kubeapi.py): what the scripts change
is read back through the API, and a drain blocked by a PodDisruptionBudget fails, naming the pod,
until the budget allows it."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.harness import NET
from tests.integration.kubernetes.kubeapi import SimApi, install_admin, install_kubectl
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import StepFailed
from vnfm.nodesteps.kubernetes import (
    ApplyPersistentVolume,
    DeleteNode,
    DeletePersistentVolumes,
    DrainNode,
    LabelNode,
    UncordonNode,
    VimToken,
    WaitNodeReady,
)
from vnfm.nodesteps.storage import InstallNfsClient

pytestmark = pytest.mark.integration

PV = """apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-data
spec:
  capacity:
    storage: 1Gi
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  nfs:
    server: "{server}"
    path: "{path}"
"""
WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
BUDGET = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}


class Api:
    """The test's own view of the API (httpx, TLS verified against the API's CA)."""

    def __init__(self, api: SimApi, token: str | None = None) -> None:
        self.base = api.endpoint.url
        self.client = httpx.Client(verify=ssl.create_default_context(cadata=api.endpoint.ca_pem), timeout=10,
                                   trust_env=False, headers={"Authorization": f"Bearer {token or api.token}"})

    def get(self, path: str) -> Any:
        r = self.client.get(self.base + path)
        return r.json() if r.status_code == 200 else r.status_code

    def send(self, method: str, path: str, body: Any, ctype: str = "application/json") -> Any:
        r = self.client.request(method, self.base + path, json=body, headers={"Content-Type": ctype})
        assert r.status_code < 300, r.text
        return r.json()


async def test_kubectl_node_scripts_real_kubectl_against_the_simulated_api(make_hosts, ssh: SshExecutor,
                                                                          tmp_path: Path) -> None:
    (cp,) = make_hosts(1)
    api = SimApi(tmp_path / "kube-api", [("k8s-m1", "master", cp.address), ("k8s-w1", "worker", f"{NET}.201"),
                                         ("k8s-w2", "worker", f"{NET}.202"), ("k8s-w3", "worker", f"{NET}.203")])
    ex = SshStepExecutor(SshExecutor(command_timeout=120), {cp.address: cp.target()}, timeout=120)
    view = Api(api)
    try:
        await install_kubectl(ssh, cp)
        await install_admin(ssh, cp, api)

        # ---- wait_node_ready: Ready at once; a node whose kubelet never reports Ready times out
        await ex.run(cp.address, WaitNodeReady("k8s-w1", 10))

        def never_ready(st: dict[str, Any]) -> None:
            st["nodes"]["k8s-w3"]["ready"] = False
            st["faults"]["never_ready"] = ["k8s-w3"]

        api.change(never_ready)
        with pytest.raises(StepFailed, match="node k8s-w3 did not become Ready within 2s: its kubelet reports"):
            await ex.run(cp.address, WaitNodeReady("k8s-w3", 2))

        # ---- label_node: set, then nothing to do
        label = LabelNode("k8s-w1", (("node-role.kubernetes.io/worker", ""), ("tier", "edge")))
        assert (await ex.run(cp.address, label)).changed
        labels = view.get("/api/v1/nodes/k8s-w1")["metadata"]["labels"]
        assert labels["node-role.kubernetes.io/worker"] == "" and labels["tier"] == "edge"
        assert not (await ex.run(cp.address, label)).changed

        # ---- vim_token: a ServiceAccount, its cluster-admin binding and a token Secret the API issues
        res = await ex.run(cp.address, VimToken("vnfm-vim", "kube-system"))
        token = res.data["token"]
        assert res.changed and len(token) > 20 and res.data["ca_pem"] == api.endpoint.ca_pem
        assert Api(api, token).get("/api/v1/nodes")["kind"] == "NodeList"  # the issued token authenticates
        assert Api(api, "not-" + token).get("/api/v1/nodes") == 401
        crb = view.get("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/vnfm-vim")
        assert crb["roleRef"]["name"] == "cluster-admin"
        assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "vnfm-vim", "namespace": "kube-system"}]
        again = await ex.run(cp.address, VimToken("vnfm-vim", "kube-system"))
        assert not again.changed and again.data["token"] == token

        # ---- apply_pv: created with kubectl's validation on (OpenAPI v3, fieldValidation=Strict),
        # unchanged, moved to another server while unbound, refused while bound
        def pv(server: str, path: str) -> ApplyPersistentVolume:
            return ApplyPersistentVolume("pv-data", PV.format(server=server, path=path), server, path)

        assert (await ex.run(cp.address, pv("10.232.0.50", "/exports/a"))).changed
        assert view.get("/api/v1/persistentvolumes/pv-data")["spec"]["nfs"] == {"server": "10.232.0.50",
                                                                                "path": "/exports/a"}
        assert not (await ex.run(cp.address, pv("10.232.0.50", "/exports/a"))).changed
        assert (await ex.run(cp.address, pv("10.232.0.51", "/exports/a"))).changed
        assert view.get("/api/v1/persistentvolumes/pv-data")["spec"]["nfs"]["server"] == "10.232.0.51"
        bad = ApplyPersistentVolume("pv-data", PV.format(server="10.232.0.51", path="/exports/a").replace(
            "    path:", "    paht:"), "10.232.0.51", "/exports/a")
        with pytest.raises(StepFailed, match='strict decoding error: unknown field "spec.nfs.paht"'):
            await ex.run(cp.address, bad)
        view.send("POST", "/api/v1/namespaces/default/persistentvolumeclaims", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}})
        assert view.get("/api/v1/persistentvolumes/pv-data")["status"]["phase"] == "Bound"
        with pytest.raises(StepFailed, match="is Bound to default/data: cannot move it to 10.232.0.52"):
            await ex.run(cp.address, pv("10.232.0.52", "/exports/a"))

        # ---- delete_pvs: all or none while one is bound; then deleted; then nothing to do
        with pytest.raises(StepFailed, match=r"PersistentVolumes in use: pv-data \(claim default/data\)"):
            await ex.run(cp.address, DeletePersistentVolumes(("pv-data", "pv-absent")))
        assert view.get("/api/v1/persistentvolumes/pv-data")["status"]["phase"] == "Bound"
        view.send("DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/data", None)
        assert (await ex.run(cp.address, DeletePersistentVolumes(("pv-data", "pv-absent")))).changed
        assert view.get("/api/v1/persistentvolumes/pv-data") == 404
        assert not (await ex.run(cp.address, DeletePersistentVolumes(("pv-data",)))).changed

        await _drain_blocked_by_a_budget(ex, cp.address, view)

        # ---- uncordon_node: schedulable again, then nothing to do; a removed node fails
        assert (await ex.run(cp.address, UncordonNode("k8s-w1"))).changed
        assert not view.get("/api/v1/nodes/k8s-w1")["spec"].get("unschedulable")
        assert not (await ex.run(cp.address, UncordonNode("k8s-w1"))).changed

        # ---- delete_node: gone from the API; a second run, a drain and an uncordon of it
        assert (await ex.run(cp.address, DeleteNode("k8s-w3"))).changed
        assert view.get("/api/v1/nodes/k8s-w3") == 404
        assert not (await ex.run(cp.address, DeleteNode("k8s-w3"))).changed
        assert not (await ex.run(cp.address, DrainNode("k8s-w3", 5))).changed
        with pytest.raises(StepFailed, match="node k8s-w3 is not in the cluster"):
            await ex.run(cp.address, UncordonNode("k8s-w3"))

        # ---- nfs_client: mount.nfs is there (nfs-common on the machine), nothing to install
        assert not (await ex.run(cp.address, InstallNfsClient())).changed
    finally:
        view.client.close()
        await ex.close()
        api.stop()


async def _drain_blocked_by_a_budget(ex: SshStepExecutor, host: str, view: Api) -> None:
    """Two replicas on two workers behind a budget of minAvailable 2: the drain fails, naming the
    pod; a drain started then finishes once the budget is lowered to 1."""
    view.send("POST", "/apis/apps/v1/namespaces/default/deployments", WEB)
    view.send("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", BUDGET)
    pods = view.get("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")["items"]
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["k8s-w1", "k8s-w2"]
    on_w1 = next(p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == "k8s-w1")
    status = view.get("/apis/policy/v1/namespaces/default/poddisruptionbudgets/web")["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["disruptionsAllowed"]) == (2, 2, 0)

    with pytest.raises(StepFailed) as ei:
        await ex.run(host, DrainNode("k8s-w1", 3))
    assert f"drain of k8s-w1 did not finish within 3s; blocking pods: default/{on_w1}" in str(ei.value)
    assert view.get("/api/v1/nodes/k8s-w1")["spec"]["unschedulable"] is True  # cordoned, pod still there
    assert view.get(f"/api/v1/namespaces/default/pods/{on_w1}")["spec"]["nodeName"] == "k8s-w1"

    drain = asyncio.create_task(ex.run(host, DrainNode("k8s-w1", 60)))
    await asyncio.sleep(0)
    for _ in range(50):  # the drain is running (its eviction is refused and retried) ...
        if drain.done():
            break
        await asyncio.sleep(0.1)
    assert not drain.done(), "the drain finished although the budget allows no disruption"
    view.send("PATCH", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web", {"spec": {"minAvailable": 1}},
              "application/merge-patch+json")
    res = await asyncio.wait_for(drain, 60)  # ... and finishes once the budget allows one
    assert res.changed
    pods = view.get("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")["items"]
    assert len(pods) == 2 and all(p["spec"]["nodeName"] == "k8s-w2" for p in pods)
    assert not (await ex.run(host, DrainNode("k8s-w1", 10))).changed  # cordoned, nothing left to evict
