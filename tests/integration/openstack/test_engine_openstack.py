"""The whole vnfm (REST API, LCM engine, Heat driver) against the local OpenStack.

The API server runs in a thread of this process; the local OpenStack is registered as a VIM
through `POST /vnfm/v1/vims` and named by `vimConnectionInfo` as in the seeds. The example package's
hooks are bound to the `noop` management driver (the Kubernetes driver would SSH into servers that
the fake virt driver never boots). The tests of this module run in order on one VNF instance;
after every operation the instance's view is compared with what Heat, Nova and Neutron report.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.openstack.cloud import SdkCloud
from vnfm.adapters.infra.openstack.driver import stack_name_of
from vnfm.adapters.infra.openstack.openrc import access_info
from vnfm.config import Settings
from vnfm.entrypoints.api.server import ServerHandle, start_in_thread
from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.demo import instantiate_request, onboard_package
from vnfm.entrypoints.cli.wait import describe_error, wait_for_op
from vnfm.examples import example_csar

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.openstack]

OP_TIMEOUT = 600.0  # per LCM operation; they take 5-30 s on the local cloud
WORKER_ASPECT = "worker_instance"
MISSING_IMAGE = "vnfm-it-no-such-image"


@dataclass
class Run:
    handle: ServerHandle
    client: VnfmClient
    data_dir: Path
    vim_id: str = ""
    vnfd_id: str = ""
    vnf_id: str = ""
    inst: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, os_env: dict[str, str]) -> Iterator[Run]:
    data_dir = tmp_path_factory.mktemp("vnfm-engine-os")
    settings = Settings(
        data_dir=data_dir,
        host="127.0.0.1",
        port=0,
        probe_callbacks=False,
        driver_bindings="mgmt-drivers-kubernetes=noop",
    )
    handle = start_in_thread(settings)
    client = VnfmClient(handle.url, timeout=60.0)
    r = Run(handle=handle, client=client, data_dir=data_dir)
    try:
        yield r
    finally:
        print("engine timings (s):", {k: round(v, 1) for k, v in r.timings.items()})
        client.close()
        handle.stop()


def _ext_vls(network_id: str) -> list[dict[str, Any]]:
    cp_cfg = [{"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET"}]}]
    return [
        {"id": "ext-master", "resourceId": network_id, "extCps": [{"cpdId": "masterNode_CP1", "cpConfig": cp_cfg}]},
        {"id": "ext-worker", "resourceId": network_id, "extCps": [{"cpdId": "workerNode_CP2", "cpConfig": cp_cfg}]},
    ]


def _instantiate_body(vim_id: str, network_id: str, extra_params: dict[str, Any] | None = None) -> dict[str, Any]:
    body = instantiate_request("simple")
    body["vimConnectionInfo"] = [{"id": str(uuid.uuid4()), "vimId": vim_id, "vimType": "openstack"}]
    body["extVirtualLinks"] = _ext_vls(network_id)
    # the hooks are bound to `noop`, which acts on no cluster parameter: sent, it would be refused (422)
    body["additionalParams"].pop("k8s_cluster_installation_param", None)
    body["additionalParams"].update(extra_params or {})
    return body


def _complete(r: Run, op_id: str, name: str, t0: float) -> dict[str, Any]:
    res = wait_for_op(r.client, op_id, timeout=OP_TIMEOUT)
    r.timings[name] = time.monotonic() - t0
    assert res.state == "COMPLETED", f"{name}: {res.state}: {describe_error(res.op)}"
    r.inst = r.client.get_vnf(r.vnf_id)
    return res.op


def _vnfcs(inst: dict[str, Any]) -> list[dict[str, Any]]:
    vnfcs: list[dict[str, Any]] = (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []
    return vnfcs


def _servers(inst: dict[str, Any], vdu: str | None = None) -> dict[str, str]:
    """VNFC id -> server id (computeResource.resourceId)."""
    return {v["id"]: v["computeResource"]["resourceId"] for v in _vnfcs(inst) if vdu is None or v["vduId"] == vdu}


def _counts(inst: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in _vnfcs(inst):
        out[v["vduId"]] = out.get(v["vduId"], 0) + 1
    return out


def _cps(vnfc: dict[str, Any]) -> dict[str, list[str]]:
    """port id -> addresses, as the view reports them."""
    out: dict[str, list[str]] = {}
    for cp in vnfc.get("vnfcCpInfo") or []:
        addrs: list[str] = []
        for proto in cp.get("cpProtocolInfo") or []:
            for ip in (proto.get("ipOverEthernet") or {}).get("ipAddresses") or []:
                addrs.extend(ip.get("addresses") or [])
        out[cp["vnfLinkPortId"]] = sorted(addrs)
    return out


def _heat_servers(cloud: SdkCloud, stack: dict[str, Any]) -> set[str]:
    """Every OS::Nova::Server in the stack tree, as Heat lists it (independently of the driver's walk)."""
    resp = cloud._heat(  # noqa: SLF001 - the test asks Heat directly
        "GET", f"/stacks/{stack['stack_name']}/{stack['id']}/resources?nested_depth=3", (200,)
    )
    return {
        str(r["physical_resource_id"])
        for r in resp.json().get("resources") or []
        if r.get("resource_type") == "OS::Nova::Server" and r.get("physical_resource_id")
    }


def _check_against_cloud(cloud: SdkCloud, inst: dict[str, Any], network_id: str) -> None:
    """The view's VNFCs are exactly the stack's servers; each is ACTIVE in Nova and its ports in
    Neutron are the view's vnfcCpInfo (ids and addresses) on the external network."""
    assert inst["instantiationState"] == "INSTANTIATED", inst["instantiationState"]
    stack = cloud.find_stack(stack_name_of(inst["id"]))
    assert stack is not None, f"Heat has no stack for VNF instance {inst['id']}"
    assert stack["stack_status"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE"), stack["stack_status"]
    reported = _servers(inst)
    assert sorted(reported.values()) == sorted(_heat_servers(cloud, stack)), "view's servers != Heat's servers"
    for v in _vnfcs(inst):
        sid = v["computeResource"]["resourceId"]
        server = cloud.get_server(sid)
        assert server is not None, f"Nova has no server {sid} of VNFC {v['id']}"
        assert server["status"] == "ACTIVE", f"server {sid}: {server['status']}"
        ports = cloud.server_ports(sid)
        assert {str(p["id"]): sorted(f["ip_address"] for f in p["fixed_ips"]) for p in ports} == _cps(v), (
            f"VNFC {v['id']}: Neutron's ports of server {sid} differ from vnfcCpInfo"
        )
        assert all(p["network_id"] == network_id for p in ports)
        assert all(addrs for addrs in _cps(v).values()), f"VNFC {v['id']} has a port without an address"


def _gone(cloud: SdkCloud, server_ids: Sequence[str], port_ids: Sequence[str] = ()) -> None:
    for sid in server_ids:
        server = cloud.get_server(sid)
        assert server is None or server.get("status") == "DELETED", f"server {sid} still exists"
    for pid in port_ids:
        assert cloud.get_port(pid) is None, f"port {pid} still exists"


def _changed(op: dict[str, Any], change: str) -> list[str]:
    """The VNFC ids of the occurrence's resourceChanges.affectedVnfcs with this changeType."""
    affected = (op.get("resourceChanges") or {}).get("affectedVnfcs") or []
    return [str(c["id"]) for c in affected if c.get("changeType") == change]


def _ports(inst: dict[str, Any], vnfc_ids: set[str] | None = None) -> list[str]:
    return [p for v in _vnfcs(inst) if vnfc_ids is None or v["id"] in vnfc_ids for p in _cps(v)]


# ------------------------------------------------------------------------------------------------
@pytest.mark.lifecycle
def test_register_vim(run: Run, os_env: dict[str, str]) -> None:
    body = {"name": "local-openstack", "vimType": "openstack", "accessInfo": access_info(os_env)}
    vim = run.client.register_vim(body)
    run.vim_id = vim["id"]
    assert vim["vimType"] == "openstack"
    shown = run.client.get_vim(run.vim_id)
    assert shown["accessInfo"]["password"] == "***", "the API never returns the password"
    assert shown["accessInfo"]["authUrl"] == os_env["OS_AUTH_URL"]
    secret = os_env["OS_PASSWORD"].encode()
    for f in run.data_dir.rglob("*"):
        if f.is_file():
            assert secret not in f.read_bytes(), f"the VIM password is stored in clear in {f}"


@pytest.mark.lifecycle
def test_onboard(run: Run) -> None:
    pkg = onboard_package(run.client, example_csar(), timeout=120)
    run.vnfd_id = pkg["vnfdId"]
    inst = run.client.create_vnf(run.vnfd_id, "it-k8s-on-openstack", "engine integration test")
    run.vnf_id = inst["id"]


@pytest.mark.lifecycle
def test_instantiate(run: Run, os_cloud: SdkCloud, network_id: str, vnfd_image: str) -> None:
    assert run.vim_id and run.vnf_id, "the earlier tests of this module run first"
    t0 = time.monotonic()
    op_id = run.client.instantiate(run.vnf_id, _instantiate_body(run.vim_id, network_id))
    _complete(run, op_id, "instantiate", t0)
    assert _counts(run.inst) == {"masterNode": 1, "workerNode": 2}
    # every ResourceHandle names the vimConnectionInfo entry of the VIM (issue 21), not the VIM's id
    [conn] = [c["id"] for c in run.inst["vimConnectionInfo"] if c.get("vimId") == run.vim_id]
    assert {v["computeResource"]["vimConnectionId"] for v in _vnfcs(run.inst)} == {conn}
    _check_against_cloud(os_cloud, run.inst, network_id)
    for sid in _servers(run.inst).values():
        server = os_cloud.get_server(sid)
        assert server is not None and (server.get("image") or {}).get("id") == vnfd_image


@pytest.mark.lifecycle
def test_scale_out(run: Run, os_cloud: SdkCloud, network_id: str) -> None:
    before = _servers(run.inst)
    assert before, "instantiate ran"
    t0 = time.monotonic()
    op_id = run.client.scale(run.vnf_id, {"type": "SCALE_OUT", "aspectId": WORKER_ASPECT, "numberOfSteps": 1})
    op = _complete(run, op_id, "scale_out", t0)
    assert _counts(run.inst) == {"masterNode": 1, "workerNode": 3}
    after = _servers(run.inst)
    assert {k: after.get(k) for k in before} == before, "scale out leaves the existing VNFCs untouched"
    added = _changed(op, "ADDED")
    assert added == [k for k in after if k not in before]
    _check_against_cloud(os_cloud, run.inst, network_id)


@pytest.mark.lifecycle
def test_scale_in(run: Run, os_cloud: SdkCloud, network_id: str) -> None:
    before = _servers(run.inst)
    assert len(before) == 4, "scale out ran"
    t0 = time.monotonic()
    op_id = run.client.scale(run.vnf_id, {"type": "SCALE_IN", "aspectId": WORKER_ASPECT, "numberOfSteps": 1})
    old_inst = run.inst
    op = _complete(run, op_id, "scale_in", t0)
    assert _counts(run.inst) == {"masterNode": 1, "workerNode": 2}
    removed = _changed(op, "REMOVED")
    after = _servers(run.inst)
    assert len(removed) == 1 and removed[0] in before and removed[0] not in after, removed
    assert {k: before[k] for k in after} == after, "scale in removes exactly the VNFC it reports"
    _gone(os_cloud, [before[removed[0]]], _ports(old_inst, set(removed)))
    _check_against_cloud(os_cloud, run.inst, network_id)


@pytest.mark.lifecycle
def test_heal_one_vnfc(run: Run, os_cloud: SdkCloud, network_id: str) -> None:
    workers = _servers(run.inst, "workerNode")
    assert len(workers) == 2, "scale in ran"
    target = next(iter(workers))
    old = next(v for v in _vnfcs(run.inst) if v["id"] == target)
    others = {k: v for k, v in _servers(run.inst).items() if k != target}
    t0 = time.monotonic()
    op_id = run.client.heal(run.vnf_id, {"vnfcInstanceId": [target], "cause": "integration test"})
    _complete(run, op_id, "heal_one", t0)
    new = next((v for v in _vnfcs(run.inst) if v["id"] == target), None)
    assert new is not None, "the healed VNFC keeps its id"
    assert new["computeResource"]["resourceId"] != old["computeResource"]["resourceId"], "a new server"
    assert _cps(new) == _cps(old), "the same port and address"
    assert {k: v for k, v in _servers(run.inst).items() if k != target} == others, "the others are untouched"
    _gone(os_cloud, [old["computeResource"]["resourceId"]])
    _check_against_cloud(os_cloud, run.inst, network_id)


@pytest.mark.lifecycle
def test_heal_entire(run: Run, os_cloud: SdkCloud, network_id: str) -> None:
    old_inst = run.inst
    old = _servers(old_inst)
    assert len(old) == 3, "the earlier tests of this module ran"
    old_stack = os_cloud.find_stack(stack_name_of(run.vnf_id))
    assert old_stack is not None
    t0 = time.monotonic()
    op_id = run.client.heal(run.vnf_id, {"cause": "integration test: entire VNF"})
    _complete(run, op_id, "heal_entire", t0)
    assert _counts(run.inst) == {"masterNode": 1, "workerNode": 2}, "heal entire keeps the scale level"
    new_stack = os_cloud.find_stack(stack_name_of(run.vnf_id))
    assert new_stack is not None and new_stack["id"] != old_stack["id"], "a new stack"
    assert not set(_servers(run.inst).values()) & set(old.values()), "all new servers"
    _gone(os_cloud, list(old.values()), _ports(old_inst))
    _check_against_cloud(os_cloud, run.inst, network_id)


@pytest.mark.lifecycle
def test_terminate(run: Run, os_cloud: SdkCloud) -> None:
    old_inst = run.inst
    old = _servers(old_inst)
    assert old, "the earlier tests of this module ran"
    t0 = time.monotonic()
    op_id = run.client.terminate(run.vnf_id, {"terminationType": "FORCEFUL"})
    _complete(run, op_id, "terminate", t0)
    assert run.inst["instantiationState"] == "NOT_INSTANTIATED"
    assert os_cloud.find_stack(stack_name_of(run.vnf_id)) is None, "the stack is deleted"
    _gone(os_cloud, list(old.values()), _ports(old_inst))
    run.client.delete_vnf(run.vnf_id)


def test_failure_then_rollback(run: Run, os_cloud: SdkCloud, network_id: str, vnfd_image: str) -> None:
    """An image that does not exist: FAILED_TEMP with Heat's reason, then rollback: ROLLED_BACK, no stack."""
    assert run.vim_id and run.vnfd_id, "the earlier tests of this module run first"
    inst = run.client.create_vnf(run.vnfd_id, "it-failure", "injected failure")
    body = _instantiate_body(run.vim_id, network_id, {"nfv": {"VDU": {"workerNode": {"image": MISSING_IMAGE}}}})
    t0 = time.monotonic()
    op_id = run.client.instantiate(inst["id"], body)
    res = wait_for_op(run.client, op_id, timeout=OP_TIMEOUT)
    run.timings["failed_instantiate"] = time.monotonic() - t0
    assert res.state == "FAILED_TEMP", f"{res.state}: {describe_error(res.op)}"
    problem = res.op.get("error") or {}
    detail = str(problem.get("detail") or "")
    print("ProblemDetails:", problem)
    assert problem.get("status") and problem.get("title"), problem
    assert "Heat" in detail and MISSING_IMAGE in detail, f"Heat's reason is not in the ProblemDetails: {detail}"
    failed = os_cloud.find_stack(stack_name_of(inst["id"]))
    assert failed is not None and failed["stack_status"] == "CREATE_FAILED", failed

    t0 = time.monotonic()
    run.client.op_action(op_id, "rollback")
    rb = wait_for_op(
        run.client,
        op_id,
        timeout=OP_TIMEOUT,
        success=frozenset({"ROLLED_BACK"}),
        failure=frozenset({"FAILED_TEMP", "FAILED", "COMPLETED"}),
        stale_entered_time=res.op.get("stateEnteredTime"),
    )
    run.timings["rollback"] = time.monotonic() - t0
    assert rb.state == "ROLLED_BACK", f"{rb.state}: {describe_error(rb.op)}"
    assert os_cloud.find_stack(stack_name_of(inst["id"])) is None, "rollback leaves no stack"
    assert run.client.get_vnf(inst["id"])["instantiationState"] == "NOT_INSTANTIATED"
    run.client.delete_vnf(inst["id"])
