"""Issue 21's examples through the service: each is refused before any occurrence or VM exists,
with its key path; one status rule (400 malformed, 422 does not fit); keys accepted but not acted
on leave a warning in the occurrence; a scale or heal cannot change the cluster's version."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.domain.errors import VnfmError
from vnfm.domain.model import OpState
from vnfm.entrypoints.cli.render import render_op

from .conftest import K8s, params

R = "additionalParams.k8s_cluster_installation_param"


def _refused(k8s: K8s, body: dict[str, Any]) -> VnfmError:
    inst = k8s.app.instances.create({"vnfdId": k8s.vnfd_id})
    with pytest.raises(VnfmError) as e:
        k8s.app.instances.instantiate(inst.id, {"flavourId": "simple", **body})
    assert k8s.app.instances.op_list() == []  # no occurrence
    assert not (k8s.app.sim.snapshot(inst.id) or {}).get("servers")  # no VM
    return e.value


def _with(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    p = base or params()
    node: Any = p
    *parents, leaf = path.split(".")
    for k in parents:
        node = node[int(k)] if k.isdigit() else node[k]
    node[leaf] = value
    return p


@pytest.mark.parametrize(("path", "value", "status", "message"), [
    ("k8s_cluster_installation_param.master_node.pod_cdir", "10.0.0.0/16", 400,
     f"{R}.master_node.pod_cdir: not a known key (did you mean 'pod_cidr'?)"),
    ("k8s_cluster_installation_param.proxy.noproxy", "10.0.0.1", 400,
     f"{R}.proxy.noproxy: not a known key (did you mean 'no_proxy'?)"),
    ("k8s_cluster_installation_param.private_registry_conection_info", [], 400,
     f"{R}.private_registry_conection_info: not a known key (did you mean 'private_registry_connection_info'?)"),
    ("k8s_cluster_instalation_param2", {}, 400,
     "additionalParams.k8s_cluster_instalation_param2: not a known key (did you mean "
     "'k8s_cluster_installation_param'?)"),
    ("k8s_cluster_installation_param.script_path", "Scripts/does_not_exist.sh", 422,
     f"{R}.script_path: 'Scripts/does_not_exist.sh' is not a file of the VNF package"),
    ("lcm-operation-user-data", "./UserData/nope.py", 422,
     "additionalParams.lcm-operation-user-data: 'UserData/nope.py' is not a file of the VNF package"),
    ("k8s_cluster_installation_param.proxy.http_proxy", "http://p:3128\nExecStartPre=/bin/sh -c id", 400,
     f"{R}.proxy.http_proxy: must be one line"),
    ("k8s_cluster_installation_param.proxy.http_proxy", 'http://p:3128" "ExecStartPre=/bin/id', 400,
     f"{R}.proxy.http_proxy: must be an http:// or https:// URL"),
    ("private_registry_installation_param", {"ssh_cp_name": "masterNode_CP1"}, 422,
     "additionalParams.private_registry_installation_param: only the management driver 'private-registry' acts on "
     "it"),
    ("k8s_cluster_installation_param.master_node.ssh_cp_name", "noSuchCP", 422,
     f"{R}.master_node.ssh_cp_name: 'noSuchCP' is neither a CP"),
])
async def test_the_issues_examples_are_refused_with_the_key_path(k8s: K8s, path: str, value: Any, status: int,
                                                                 message: str) -> None:
    e = _refused(k8s, {"additionalParams": _with(path, value)})
    assert e.status == status and e.detail.startswith(message), e.detail
    assert "s3cret" not in e.detail and "password1" not in e.detail


async def test_mount_to_etc_is_refused(k8s: K8s) -> None:
    storage = {"ssh_cp_name": "storage_server_CP", "username": "ubuntu", "password": "pw",
               "cinder_volume_setup_params": [{"volume_resource_id": "storage_server_volume", "mount_to": "/etc"}],
               "nfs_server_setup_params": [{"export_dir": "/etc/exports.d", "export_to": "10.10.0.0/24"}]}
    e = _refused(k8s, {"additionalParams": params(storage_server=storage)})
    assert e.status == 400
    assert f"{R}.storage_server.cinder_volume_setup_params[0].mount_to: '/etc' is a system directory" in e.detail
    assert f"{R}.storage_server.nfs_server_setup_params[0].export_dir: '/etc/exports.d' is a system directory" \
        in e.detail


async def test_keys_accepted_but_not_acted_on_leave_a_warning_in_the_occurrence(k8s: K8s) -> None:
    body = params()
    body["lcm-operation-user-data"] = "./UserData/k8s_cluster_user_data.py"
    body["lcm-operation-user-data-class"] = "KubernetesClusterUserData"
    _, occ = await k8s.instantiate("simple", body)
    warnings = [e["message"] for e in occ.events if e["message"].startswith("warning: ")]
    assert [w.split(":")[1].strip() for w in warnings] == [
        "additionalParams.lcm-operation-user-data", "additionalParams.lcm-operation-user-data-class",
        "additionalParams.k8s_cluster_installation_param.script_path"]
    assert all("accepted but not acted on" in w for w in warnings)
    assert [f"warning: {w}" for w in occ.warnings] == warnings  # vnfmWarnings of the occurrence
    shown = render_op({"id": occ.id, "vnfmWarnings": occ.warnings})
    assert "Warnings:" in shown and "lcm-operation-user-data-class: accepted but not acted on" in shown


async def test_a_scale_or_heal_cannot_change_the_clusters_version(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple", params(kubernetes_version="1.30.4"))
    ops = len(k8s.app.instances.op_list())
    skew = {"k8s_cluster_installation_param": {"kubernetes_version": "1.33.1"}}
    with pytest.raises(VnfmError) as e:
        k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                          "additionalParams": skew})
    assert e.value.status == 422
    assert e.value.detail == (f"{R}.kubernetes_version: a kubelet 1.33.1 would be newer than the cluster's API "
                              "server 1.30.4 (Kubernetes version skew policy)")
    for older, why in (("1.26.0", "4 minor versions older"), ("1.29.3", "kubeadm cannot join")):
        with pytest.raises(VnfmError) as e:
            k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance", "additionalParams": {
                "k8s_cluster_installation_param": {"kubernetes_version": older}}})
        assert e.value.status == 422 and why in e.value.detail, e.value.detail
    w0 = k8s.app.instances.get(inst_id).resources.of_vdu("workerNode")[0]
    with pytest.raises(VnfmError) as e:
        k8s.app.instances.heal(inst_id, {"vnfcInstanceId": [w0.id], "additionalParams": skew})
    assert e.value.status == 422
    assert len(k8s.app.instances.op_list()) == ops
    same = {"k8s_cluster_installation_param": {"kubernetes_version": "1.30.4"}}
    occ = await k8s.done(k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                           "additionalParams": same}))
    assert occ.operation_state == OpState.COMPLETED


async def test_a_scale_override_with_a_hostile_proxy_is_refused(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple")
    ops = len(k8s.app.instances.op_list())
    for bad in ("http://p:3128\nExecStartPre=/bin/sh", "http://p;id", "-x"):
        with pytest.raises(VnfmError) as e:
            k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance", "additionalParams": {
                "k8s_cluster_installation_param": {"proxy": {"http_proxy": bad}}}})
        assert e.value.status == 400 and e.value.detail.startswith(f"{R}.proxy.http_proxy:")
    with pytest.raises(VnfmError) as e:
        k8s.app.instances.terminate(inst_id, {"terminationType": "FORCEFUL", "additionalParams": {
            "k8s_cluster_installation_param": {}}})
    assert e.value.status == 400 and "a TERMINATE request does not take it" in e.value.detail
    assert len(k8s.app.instances.op_list()) == ops


async def test_an_engine_key_of_another_operation_is_refused(k8s: K8s) -> None:
    """`all` is read by heal only, `vnfc_instance_ids` by scale only, `ignore_dependent_cnfs` by terminate
    only: given to another operation each would be ignored, so it is refused (400, naming the one that reads it)."""
    inst_id, _ = await k8s.instantiate("simple")
    ops = len(k8s.app.instances.op_list())
    w0 = k8s.app.instances.get(inst_id).resources.of_vdu("workerNode")[0]
    refusals = [
        (lambda: k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                   "additionalParams": {"all": True}}), "all", "HEAL"),
        (lambda: k8s.app.instances.heal(inst_id, {"vnfcInstanceId": [w0.id],
                                                  "additionalParams": {"vnfcInstanceIds": [w0.id]}}),
         "vnfcInstanceIds", "SCALE"),
        (lambda: k8s.app.instances.heal(inst_id, {"additionalParams": {"ignore_dependent_cnfs": True}}),
         "ignore_dependent_cnfs", "TERMINATE"),
        (lambda: k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                   "additionalParams": {"vnfcInstanceIds": [w0.id]}}),
         "vnfcInstanceIds", "SCALE_IN"),
        (lambda: k8s.app.instances.terminate(inst_id, {"terminationType": "FORCEFUL",
                                                       "additionalParams": {"all": True}}), "all", "HEAL"),
    ]
    for call, key, only in refusals:
        with pytest.raises(VnfmError) as e:
            call()
        assert e.value.status == 400
        assert e.value.detail.startswith(f"additionalParams.{key}: a ")
        assert f"(only {only} does)" in e.value.detail or f"(only {only} takes it)" in e.value.detail
    assert len(k8s.app.instances.op_list()) == ops


async def test_a_scale_in_takes_the_documented_vnfc_ids_alias(k8s: K8s) -> None:
    inst_id, _ = await k8s.instantiate("simple")
    await k8s.done(k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance"}))
    workers = k8s.app.instances.get(inst_id).resources.of_vdu("workerNode")
    chosen = workers[0].id
    occ = await k8s.done(k8s.app.instances.scale(inst_id, {"type": "SCALE_IN", "aspectId": "worker_instance",
                                                           "additionalParams": {"vnfcInstanceIds": [chosen]}}))
    assert occ.operation_state == OpState.COMPLETED
    assert chosen not in k8s.app.instances.get(inst_id).resources.ids()
