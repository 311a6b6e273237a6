"""k8s_cluster_installation_param validation: the key path and why, at request time."""

from __future__ import annotations

import pytest

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.domain.errors import BadRequest

from .conftest import PARAMS, K8s, params

R = "additionalParams.k8s_cluster_installation_param"


def test_seed_request_parses_and_normalises_the_seed_pod_cidr() -> None:
    cp = P.parse(PARAMS)
    assert cp.vim_name == "kubernetes_vim" and cp.master.aspect_id == "master_instance"
    assert cp.master.pod_cidr == "192.168.0.0/16" and cp.master.cluster_cidr == "10.199.187.0/24"
    assert cp.warnings == (f"{R}.master_node.pod_cidr: '192.168.3.0/16' has host bits set; using 192.168.0.0/16",)
    assert cp.proxy.no_proxy == ("192.168.246.0/24", "10.0.0.1") and cp.proxy.k8s_node_cidr == "10.10.0.0/24"
    assert "s3cret" not in repr(cp) and "password1" not in repr(cp)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"master_node__pod_cidr": "10.0.0.1/16"},
         f"{R}.master_node.pod_cidr: '10.0.0.1/16' has host bits set (did you mean 10.0.0.0/16?)"),
        ({"master_node__pod_cidr": "banana"},
         f"{R}.master_node.pod_cidr: 'banana' is not a CIDR (expected e.g. 10.0.0.0/16)"),
        ({"master_node__cluster_cidr": "192.168.10.0/24"},
         f"{R}.master_node.cluster_cidr: 192.168.10.0/24 overlaps pod_cidr 192.168.0.0/16: the service and "
         "pod networks must be disjoint"),
        ({"vim_name": 3}, f"{R}.vim_name: must be a string, got int"),
        ({"master_node__ssh_cp_name": None}, f"{R}.master_node.ssh_cp_name: is required"),
        ({"worker_node__ssh_cp_name": 7}, f"{R}.worker_node.ssh_cp_name: must be a string, got int"),
        ({"worker_node__password": None}, f"{R}.worker_node: give 'password' or 'ssh_private_key' for SSH access"),
        ({"worker_node__aspect_id": "master_instance"},
         f"{R}.worker_node.aspect_id: 'master_instance' is also master_node.aspect_id; masters and workers "
         "must scale through different aspects"),
        ({"proxy__http_proxy": "user:pw@host"},
         f"{R}.proxy.http_proxy: must be an http:// or https:// URL with a host (no blanks, quotes, "
         "backslashes or semicolons; credentials %-encoded)"),
        ({"proxy__k8s_node_cidr": "10.10.0.7/24"},
         f"{R}.proxy.k8s_node_cidr: '10.10.0.7/24' has host bits set (did you mean 10.10.0.0/24?)"),
        ({"master_node": "x"}, f"{R}.master_node: must be an object, got str"),
    ],
)
def test_errors_name_the_key_and_why(change: dict[str, object], message: str) -> None:
    with pytest.raises(BadRequest) as e:
        P.parse(params(**change))
    assert e.value.detail == message


def test_seed_002_style_optional_keys() -> None:
    cp = P.parse(params(vim_name=None, master_node__cluster_cp_name=None, master_node__pod_cidr=None,
                        master_node__nic_cp_name=None, worker_node__aspect_id=None))
    assert cp.vim_name is None and cp.master.cluster_cp_name == "masterNode_CP1"
    assert cp.master.pod_cidr == "192.168.0.0/16" and cp.worker.aspect_id is None


def test_ssh_key_instead_of_password() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n"
    cp = P.parse(params(worker_node__password=None, worker_node__ssh_private_key=key))
    assert cp.worker.ssh_private_key == key and cp.worker.password is None
    assert "abc" not in repr(cp)


def test_request_params_override_stored_ones_one_key_deep() -> None:
    merged = P.override(PARAMS, {"k8s_cluster_installation_param": {"worker_node": {"password": "new-pw"}}})
    cp = P.parse(merged)
    assert cp.worker.password == "new-pw" and cp.worker.ssh_cp_name == "workerNode_CP2"


async def test_validation_runs_at_request_time(k8s: K8s) -> None:
    inst = k8s.app.instances.create({"vnfdId": k8s.vnfd_id})
    with pytest.raises(BadRequest, match=r"master_node\.pod_cidr: '10\.0\.0\.1/16' has host bits set"):
        k8s.app.instances.instantiate(inst.id, {"flavourId": "simple",
                                                "additionalParams": params(master_node__pod_cidr="10.0.0.1/16")})
    assert k8s.app.instances.op_list() == []
    inst_id, _ = await k8s.instantiate("simple")
    with pytest.raises(BadRequest, match=r"worker_node\.username: '' is not|worker_node\.username: must not be empty"):
        k8s.app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                          "additionalParams": {"k8s_cluster_installation_param":
                                                               {"worker_node": {"username": ""}}}})
