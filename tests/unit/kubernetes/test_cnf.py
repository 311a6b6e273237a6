"""A CNF (Tacker's CNF-NodePort sample package, seed 002's request body) on a cluster the Kubespray
driver built on the simulated cloud: the Kubernetes infrastructure driver applies the manifests
through the cluster's (simulated) Kubernetes API, the NodePort driver publishes the NodePorts on
the cluster's external load balancer."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.kubernetes import KubernetesInfraDriver
from vnfm.adapters.infra.simulator.twin import instance_state
from vnfm.domain.errors import BadRequest, UnprocessableEntity
from vnfm.packaging.csar_files import build_csar

from .conftest import K8s

PACKAGES = Path(__file__).resolve().parents[2] / "api" / "packages"
ANSIBLE = "10.10.0.50"  # no simulated server has it: the operator's Ansible server

KUBESPRAY: dict[str, Any] = {"k8s_cluster_installation_param": {
    "vim_name": "kubernetes_vim",
    "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1", "nic_cp_name": "masterNode_CP1",
                    "username": "ubuntu", "password": "ubuntu", "pod_cidr": "192.168.0.0/16",
                    "cluster_cidr": "10.199.187.0/24"},
    "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2", "nic_cp_name": "workerNode_CP2",
                    "username": "ubuntu", "password": "ubuntu"},
    "ansible": {"ip_address": ANSIBLE, "username": "ubuntu", "password": "ubuntu",
                "kubespray_root_path": "/home/ubuntu/kubespray-2.16.0",
                "transferring_inventory_path": "/home/ubuntu/kubespray-2.16.0/inventory/mycluster"},
    "external_lb_param": {"ssh_cp_name": "externalLB_CP3", "ssh_username": "ubuntu", "ssh_password": "ubuntu",
                          "script_path": "Scripts/install_external_lb.sh"},
}}
CNF_FILES = ["Files/kubernetes/deployment.yaml", "Files/kubernetes/service_with_nodeport.yaml",
             "Files/kubernetes/service_without_nodeport.yaml"]


def onboard(k8s: K8s, name: str) -> str:
    pkg = k8s.app.packages.create({})
    return str(k8s.app.packages.upload(pkg.id, build_csar(PACKAGES / name)).vnfd_id)


def cnf_body(vim_id: str, lb_ip: str, **over: Any) -> dict[str, Any]:
    """Seed 002's simple_cnf_param_file.json, with this cluster's VIM and load balancer."""
    body = {"flavourId": "simple",
            "vimConnectionInfo": [{"id": "f5d17ce5-1e48-4971-8946-5c0126c0425e", "vimId": vim_id,
                                   "vimType": "kubernetes"}],
            "additionalParams": {"lcm-kubernetes-def-files": list(CNF_FILES),
                                 "lcm-kubernetes-external-lb": {
                                     "script_path": "Scripts/configure_lb.sh",
                                     "external_lb_param": {"ssh_ip": lb_ip, "ssh_username": "ubuntu",
                                                           "ssh_password": "ubuntu"}}}}
    body["additionalParams"].update(over)
    return body


async def cluster(k8s: K8s) -> tuple[str, str, str]:
    """A Kubespray cluster: (its instance id, its Kubernetes VIM id, its load balancer's address)."""
    inst = k8s.app.instances.create({"vnfdId": onboard(k8s, "kubespray")})
    await k8s.done(k8s.app.instances.instantiate(inst.id, {"flavourId": "simple",
                                                           "additionalParams": copy.deepcopy(KUBESPRAY)}))
    cur = k8s.app.instances.get(inst.id)
    vim_id = next(e["vimId"] for e in cur.vim_connection_info if e.get("vimType") == "kubernetes")
    lb = next(v for v in cur.resources.vnfcs if v.vdu_id == "externalLB")
    return inst.id, vim_id, lb.cps[0].ip_addresses[0]


def frontends(k8s: K8s, cluster_id: str) -> dict[str, list[str]]:
    state = instance_state(k8s.app.sim, cluster_id)
    assert state is not None
    return dict(state["external_lb"]["frontends"])


async def test_cnf_lifecycle_with_nodeports_on_the_external_lb(k8s: K8s) -> None:
    app = k8s.app
    cluster_id, vim_id, lb_ip = await cluster(k8s)
    before = frontends(k8s, cluster_id)  # the cluster's own (its API)
    cnf_vnfd = onboard(k8s, "cnf_nodeport")
    cnf = app.instances.create({"vnfdId": cnf_vnfd})
    await k8s.done(app.instances.instantiate(cnf.id, cnf_body(vim_id, lb_ip)))

    inst = app.instances.get(cnf.id)
    assert inst.vim_id == vim_id
    [pod] = inst.resources.vnfcs
    assert pod.vdu_id == "VDU1" and pod.resource_type == "Deployment" and pod.server_id.startswith("vdu1-simple-")
    state = instance_state(app.sim, cluster_id)
    assert state is not None
    objs = state["kubernetes"]["api"]
    assert "default/vdu1-simple" in objs["deployments"]
    ports = {k: v["node_ports"] for k, v in objs["services"].items() if k.startswith("default/nginx")}
    random_port = ports["default/nginx-service"][0]
    assert ports["default/nginx-service-np"] == [30422] and 30000 <= random_port <= 32767
    fe = frontends(k8s, cluster_id)
    node_addrs = sorted(n["addresses"][0] for n in state["kubernetes"]["nodes"])
    assert sorted(fe) == sorted([*before, "30422", str(random_port)])
    assert sorted(a.split(":")[0] for a in fe["30422"]) == node_addrs
    assert all(a.endswith(":30422") for a in fe["30422"])

    # ---- scale out by one step: one more pod, the LB unchanged
    await k8s.done(app.instances.scale(cnf.id, {"type": "SCALE_OUT", "aspectId": "vdu1_aspect", "numberOfSteps": 1}))
    inst = app.instances.get(cnf.id)
    assert len(inst.resources.vnfcs) == 2 and pod.id in inst.resources.ids()
    # ---- scale in: the VNFC the engine chooses (the newest) goes, exactly
    newest = max(inst.resources.vnfcs, key=lambda v: v.seq)
    await k8s.done(app.instances.scale(cnf.id, {"type": "SCALE_IN", "aspectId": "vdu1_aspect", "numberOfSteps": 1}))
    inst = app.instances.get(cnf.id)
    assert inst.resources.ids() == {pod.id} and newest.id not in inst.resources.ids()

    # ---- heal the VNFC: its pod is replaced, the VNFC id stays
    await k8s.done(app.instances.heal(cnf.id, {"vnfcInstanceId": [pod.id]}))
    [healed] = app.instances.get(cnf.id).resources.vnfcs
    assert healed.id == pod.id and healed.server_id != pod.server_id

    # ---- heal entire: everything re-created; a changed random NodePort replaces the old frontend
    await k8s.done(app.instances.heal(cnf.id, {}))
    state = instance_state(app.sim, cluster_id)
    assert state is not None
    new_port = state["kubernetes"]["api"]["services"]["default/nginx-service"]["node_ports"][0]
    fe = frontends(k8s, cluster_id)
    assert sorted(fe) == sorted([*before, "30422", str(new_port)])

    # ---- terminate: the CNF's objects and exactly its frontends go
    await k8s.done(app.instances.terminate(cnf.id, {"terminationType": "GRACEFUL"}))
    assert frontends(k8s, cluster_id) == before
    state = instance_state(app.sim, cluster_id)
    assert state is not None
    assert not state["kubernetes"]["api"]["deployments"]
    assert not [k for k in state["kubernetes"]["api"]["services"] if k.startswith("default/nginx")]


BAD = {
    "Files/kubernetes/ingress.yaml": "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n",
    "Files/kubernetes/broken.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vdu1-simple}\n"
        "spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}, spec: {}}}\n"),
    "Files/kubernetes/syntax.yaml": "kind: [unclosed\n",
}


async def test_bad_manifests_are_refused_at_request_time(k8s: K8s, tmp_path: Path) -> None:
    app = k8s.app
    cluster_id, vim_id, lb_ip = await cluster(k8s)
    pkg_dir = tmp_path / "cnf"
    shutil.copytree(PACKAGES / "cnf_nodeport", pkg_dir)
    for name, text in BAD.items():
        (pkg_dir / name).write_text(text)
    pkg = app.packages.create({})
    cnf = app.instances.create({"vnfdId": str(app.packages.upload(pkg.id, build_csar(pkg_dir)).vnfd_id)})

    def refused(files: list[str], vim: str = vim_id) -> str:
        with pytest.raises(UnprocessableEntity) as e:
            app.instances.instantiate(cnf.id, cnf_body(vim, lb_ip, **{"lcm-kubernetes-def-files": files}))
        return str(e.value)

    assert "Files/kubernetes/ingress.yaml: Ingress 'web' (document 1): kind Ingress is not supported" in refused(
        [*CNF_FILES, "Files/kubernetes/ingress.yaml"])
    msg = refused(["Files/kubernetes/broken.yaml"])
    assert "Files/kubernetes/broken.yaml: Deployment 'vdu1-simple' (document 2)" in msg and "containers" in msg
    assert "Files/kubernetes/syntax.yaml" in refused(["Files/kubernetes/syntax.yaml"])
    assert "Files/kubernetes/missing.yaml is not a file" in refused(["Files/kubernetes/missing.yaml"])
    assert "not registered" in refused(CNF_FILES, vim="no-such-vim")
    no_ip = cnf_body(vim_id, lb_ip)
    del no_ip["additionalParams"]["lcm-kubernetes-external-lb"]["external_lb_param"]["ssh_ip"]
    with pytest.raises(BadRequest, match="external_lb_param.ssh_ip"):
        app.instances.instantiate(cnf.id, no_ip)
    inline = cnf_body(vim_id, lb_ip)
    inline["vimConnectionInfo"][0]["accessInfo"] = {"bearer_token": "inline-token"}
    with pytest.raises(UnprocessableEntity, match="accessInfo of a Kubernetes VIM cannot be given here") as e:
        app.instances.instantiate(cnf.id, inline)
    assert "inline-token" not in str(e.value)
    no_script = cnf_body(vim_id, lb_ip)
    no_script["additionalParams"]["lcm-kubernetes-external-lb"]["script_path"] = "Scripts/missing_lb.sh"
    with pytest.raises(UnprocessableEntity, match="lcm-kubernetes-external-lb.script_path: 'Scripts/missing_lb.sh'"):
        app.instances.instantiate(cnf.id, no_script)
    # nothing was applied, the instance is as it was
    assert app.instances.get(cnf.id).instantiation_state.value == "NOT_INSTANTIATED"
    state = instance_state(app.sim, cluster_id)
    assert state is not None and not state["kubernetes"]["api"]["configmaps"]


ALL_KINDS = """\
apiVersion: v1
kind: Namespace
metadata: {name: cnf}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: cnf}
data: {key: value}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: cnf}
stringData: {password: not-logged}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: cnf}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: vdu1-simple, namespace: cnf}
spec:
  replicas: 1
  serviceName: vdu1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: cnf}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: helper, namespace: cnf, labels: {app: helper}}
spec: {containers: [{name: helper, image: busybox}]}
"""


async def test_every_kind_on_a_kubeadm_cluster_and_forceful_terminate(k8s: K8s, tmp_path: Path) -> None:
    """A CNF whose VDU is a StatefulSet, beside a DaemonSet, a bare Pod, a ConfigMap, a Secret, a
    claim and its own Namespace, on a cluster the kubeadm driver built (no external LB named)."""
    app = k8s.app
    cluster_id, _ = await k8s.instantiate("ha")
    vim_id = app.instances.get(cluster_id).driver_state["kubeadm"]["vim_id"]
    pkg_dir = tmp_path / "cnf"
    shutil.copytree(PACKAGES / "cnf_nodeport", pkg_dir)
    (pkg_dir / "Files/kubernetes/all.yaml").write_text(ALL_KINDS)
    pkg = app.packages.create({})
    cnf = app.instances.create({"vnfdId": str(app.packages.upload(pkg.id, build_csar(pkg_dir)).vnfd_id)})
    body = cnf_body(vim_id, "192.0.2.1", **{"lcm-kubernetes-def-files": ["Files/kubernetes/all.yaml"]})
    body["additionalParams"].pop("lcm-kubernetes-external-lb")
    body["vimConnectionInfo"][0]["vimType"] = "ETSINFV.KUBERNETES.V_1"
    await k8s.done(app.instances.instantiate(cnf.id, body))

    [pod] = app.instances.get(cnf.id).resources.vnfcs
    assert (pod.vdu_id, pod.resource_type, pod.server_id) == ("VDU1", "StatefulSet", "vdu1-simple-0")
    api = k8s.view(cluster_id)  # the twin: what the API created
    state = instance_state(app.sim, cluster_id)
    assert state is not None
    objs = state["kubernetes"]["api"]
    assert "cnf" in objs["namespaces"] and objs["configmaps"] == ["cnf/conf"] and objs["secrets"] == ["cnf/creds"]
    assert objs["persistentvolumeclaims"] == ["cnf/data"] and "cnf/agent" in objs["daemonsets"]
    workers = [n for n in api["nodes"] if n.startswith("workernode")]
    assert objs["daemonsets"]["cnf/agent"]["ready"] == len(api["nodes"]) - 3 == len(workers)
    assert objs["pods"]["cnf/helper"]["node"] in workers
    assert "not-logged" not in str(state)

    await k8s.done(app.instances.scale(cnf.id, {"type": "SCALE_OUT", "aspectId": "vdu1_aspect", "numberOfSteps": 1}))
    assert sorted(v.server_id for v in app.instances.get(cnf.id).resources.vnfcs) == ["vdu1-simple-0",
                                                                                       "vdu1-simple-1"]
    await k8s.done(app.instances.terminate(cnf.id, {"terminationType": "FORCEFUL"}))
    state = instance_state(app.sim, cluster_id)
    assert state is not None
    objs = state["kubernetes"]["api"]
    assert "cnf" not in objs["namespaces"] and not objs["statefulsets"] and not objs["daemonsets"]
    assert not [k for k in objs["pods"] if k.startswith("cnf/")]


async def test_a_vim_whose_ca_is_not_the_servers_fails_the_operation(k8s: K8s) -> None:
    """TLS is verified: the same API URL and token with another CA is not trusted."""
    app = k8s.app
    cluster_id, _ = await k8s.instantiate("ha")
    real = app.vims.get(app.instances.get(cluster_id).driver_state["kubeadm"]["vim_id"])
    assert real is not None
    from vnfm.adapters.infra.simulator.k8sapi import pki

    other_ca = pki.ensure(Path(str(k8s.app.settings.data_dir)) / "other-ca", ["127.0.0.1"]).ca_pem
    assert other_ca != real.access_info["ssl_ca_cert"]
    fake = app.vims.register_body({"vimType": "kubernetes", "name": "wrong-ca",
                                   "accessInfo": {**real.access_info, "ssl_ca_cert": other_ca}})
    cnf = app.instances.create({"vnfdId": onboard(k8s, "cnf_nodeport")})
    body = cnf_body(fake.id, "192.0.2.1")
    body["additionalParams"].pop("lcm-kubernetes-external-lb")
    occ = await k8s.wait(app.instances.instantiate(cnf.id, body))
    assert occ.operation_state.value == "FAILED_TEMP"
    assert "CERTIFICATE_VERIFY_FAILED" in str(occ.error) and real.access_info["bearer_token"] not in str(occ.error)


async def test_pods_that_never_get_ready_fail_instantiate_and_rollback_removes_everything(
        k8s: K8s, tmp_path: Path) -> None:
    app = k8s.app
    cluster_id, vim_id, lb_ip = await cluster(k8s)
    before = frontends(k8s, cluster_id)

    def never_ready(extras: dict[str, Any]) -> None:
        extras["k8s"]["faults"]["pods_never_ready"] = ["vdu1-simple"]

    app.sim.update_extras(cluster_id, never_ready)
    app.infra_drivers.register("kubernetes", lambda: KubernetesInfraDriver(ready_timeout=0.3, poll=0.01))
    cnf = app.instances.create({"vnfdId": onboard(k8s, "cnf_nodeport")})
    occ = await k8s.wait(app.instances.instantiate(cnf.id, cnf_body(vim_id, lb_ip)))
    assert occ.operation_state.value == "FAILED_TEMP"
    assert "not ready after" in str(occ.error) and "Deployment 'default/vdu1-simple' (0/1 Ready)" in str(occ.error)

    occ = await k8s.wait(app.instances.rollback(occ.id))
    assert occ.operation_state.value == "ROLLED_BACK", occ.error
    state = instance_state(app.sim, cluster_id)
    assert state is not None and not state["kubernetes"]["api"]["deployments"]
    assert not [k for k in state["kubernetes"]["api"]["services"] if k.startswith("default/nginx")]
    assert frontends(k8s, cluster_id) == before


async def test_heal_of_a_bare_pod_vnfc_re_creates_it(k8s: K8s, tmp_path: Path) -> None:
    """Nothing re-creates a bare Pod: the driver does, under the same name; the VNFC id stays."""
    app = k8s.app
    cluster_id, _ = await k8s.instantiate("ha")
    vim_id = app.instances.get(cluster_id).driver_state["kubeadm"]["vim_id"]
    pkg_dir = tmp_path / "cnf"
    shutil.copytree(PACKAGES / "cnf_nodeport", pkg_dir)
    (pkg_dir / "Files/kubernetes/pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vdu1-simple}\n"
        "spec: {containers: [{name: c, image: busybox}]}\n")
    pkg = app.packages.create({})
    cnf = app.instances.create({"vnfdId": str(app.packages.upload(pkg.id, build_csar(pkg_dir)).vnfd_id)})
    body = cnf_body(vim_id, "192.0.2.1", **{"lcm-kubernetes-def-files": ["Files/kubernetes/pod.yaml"]})
    body["additionalParams"].pop("lcm-kubernetes-external-lb")
    await k8s.done(app.instances.instantiate(cnf.id, body))
    [pod] = app.instances.get(cnf.id).resources.vnfcs
    assert (pod.resource_type, pod.server_id) == ("Pod", "vdu1-simple")
    await k8s.done(app.instances.heal(cnf.id, {"vnfcInstanceId": [pod.id]}))
    [healed] = app.instances.get(cnf.id).resources.vnfcs
    assert healed.id == pod.id and healed.server_id == "vdu1-simple"
    assert healed.metadata["uid"] != pod.metadata["uid"]
    # a bare Pod does not scale: the operation fails saying so, it does not complete doing nothing
    occ = await k8s.wait(app.instances.scale(cnf.id, {"type": "SCALE_OUT", "aspectId": "vdu1_aspect",
                                                      "numberOfSteps": 1}))
    assert occ.operation_state.value == "FAILED_TEMP"
    assert "Pod 'default/vdu1-simple': only a Deployment or a StatefulSet scales" in str(occ.error)


async def test_retry_after_a_failed_wait_converges_and_keeps_the_allocated_node_port(k8s: K8s) -> None:
    """A retry applies the manifests again over what exists: replaced (a Service keeps its node
    ports), nothing twice."""
    app = k8s.app
    cluster_id, vim_id, lb_ip = await cluster(k8s)
    before = frontends(k8s, cluster_id)

    def faults(names: list[str]) -> None:
        def fn(extras: dict[str, Any]) -> None:
            extras["k8s"]["faults"]["pods_never_ready"] = names

        app.sim.update_extras(cluster_id, fn)

    faults(["vdu1-simple"])
    app.infra_drivers.register("kubernetes", lambda: KubernetesInfraDriver(ready_timeout=0.3, poll=0.01))
    cnf = app.instances.create({"vnfdId": onboard(k8s, "cnf_nodeport")})
    occ = await k8s.wait(app.instances.instantiate(cnf.id, cnf_body(vim_id, lb_ip)))
    assert occ.operation_state.value == "FAILED_TEMP"
    state = instance_state(app.sim, cluster_id)
    assert state is not None
    port = state["kubernetes"]["api"]["services"]["default/nginx-service"]["node_ports"]

    faults([])
    occ = await k8s.wait(app.instances.retry(occ.id))
    assert occ.operation_state.value == "COMPLETED", occ.error
    state = instance_state(app.sim, cluster_id)
    assert state is not None
    api = state["kubernetes"]["api"]
    assert api["services"]["default/nginx-service"]["node_ports"] == port
    assert list(api["deployments"]) == ["default/vdu1-simple"]
    assert api["deployments"]["default/vdu1-simple"]["ready"] == 1
    assert set(frontends(k8s, cluster_id)) == {*before, "30422", str(port[0])}
