"""`vnfm demo`: the basic lifecycle (onboard, create, instantiate, scale out and in, heal a VNFC,
heal the entire VNF, terminate, delete), each step's result shown as the instance reports it."""

from __future__ import annotations

import json
from typing import Any

from vnfm.entrypoints.cli.client import ApiError, ServerUnreachable, VnfmClient
from vnfm.entrypoints.cli.demo.runner import Echo, Runner, Step, StepFailed, onboard_package, run_task
from vnfm.entrypoints.cli.output import mask_secrets

WORKER_ASPECT = "worker_instance"


def instantiate_request(flavour: str = "simple") -> dict[str, Any]:
    """A seed-style InstantiateVnfRequest (002 "simple_kubernetes_param_file.json") for the example
    package. No vimConnectionInfo: the default VIM (the simulated cloud) is used."""
    return {
        "flavourId": flavour,
        "additionalParams": {
            "k8s_cluster_installation_param": {
                "master_node": {
                    "aspect_id": "master_instance",
                    "ssh_cp_name": "masterNode_CP1",
                    "nic_cp_name": "masterNode_CP1",
                    "username": "ubuntu",
                    "password": "ubuntu",  # noqa: S106 - the simulated VMs' demo login
                    "pod_cidr": "192.168.0.0/16",
                    "cluster_cidr": "10.199.187.0/24",
                },
                "worker_node": {
                    "aspect_id": WORKER_ASPECT,
                    "ssh_cp_name": "workerNode_CP2",
                    "nic_cp_name": "workerNode_CP2",
                    "username": "ubuntu",
                    "password": "ubuntu",  # noqa: S106
                },
            },
        },
    }


def vnfcs_of(inst: dict[str, Any]) -> list[dict[str, Any]]:
    return list((inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or [])


def vnfcs_per_vdu(inst: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in vnfcs_of(inst):
        vdu = str(v.get("vduId"))
        counts[vdu] = counts.get(vdu, 0) + 1
    return counts


def describe_instance(inst: dict[str, Any]) -> str:
    """One line: instantiation state, VNFCs per VDU, scale levels."""
    parts = [str(inst.get("instantiationState"))]
    info = inst.get("instantiatedVnfInfo") or {}
    counts = vnfcs_per_vdu(inst)
    if counts:
        parts.append("vnfcs " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    scale = info.get("scaleStatus") or []
    if scale:
        parts.append("scale " + " ".join(f"{s.get('aspectId')}={s.get('scaleLevel')}" for s in scale))
    return ", ".join(parts)


def pick_worker_vnfc(inst: dict[str, Any]) -> dict[str, Any]:
    """A worker VNFC to heal: a vnfcResourceInfo whose VDU looks like a worker, else the last one."""
    vnfcs = vnfcs_of(inst)
    if not vnfcs:
        raise StepFailed("the instance has no VNFCs to heal")
    workers = [v for v in vnfcs if "worker" in str(v.get("vduId", "")).lower()]
    chosen: dict[str, Any] = (workers or vnfcs)[-1]
    return chosen


def server_of(inst: dict[str, Any], vnfc_id: str) -> str | None:
    """The server (compute resource id) of one VNFC of the instance."""
    for v in vnfcs_of(inst):
        if v.get("id") == vnfc_id:
            return (v.get("computeResource") or {}).get("resourceId")
    return None


class Demo(Runner):
    """The basic lifecycle; the HA and OpenStack scenarios add their checks to its steps."""

    def __init__(
        self, client: VnfmClient, echo: Echo, *, timeout: float = 300.0, flavour: str = "simple"
    ) -> None:
        super().__init__(client, echo, timeout=timeout, flavour=flavour)

    def _show(self) -> dict[str, Any]:
        assert self.state.vnf_id is not None
        return self.client.get_vnf(self.state.vnf_id)

    def _task(self, op_id: str) -> str:
        run_task(self.client, op_id, self.echo, self.timeout)
        return describe_instance(self._show())

    def _echo_request(self, body: dict[str, Any]) -> None:
        self.echo("    request: " + json.dumps(mask_secrets(body), indent=2).replace("\n", "\n    "))

    # --- steps ---
    def onboard(self, csar: bytes) -> str:
        pkg = onboard_package(self.client, csar, self.timeout)
        self.state.pkg_id = pkg["id"]
        self.state.vnfd_id = pkg["vnfdId"]
        return (
            f"package {pkg['id']} {pkg.get('onboardingState')}/{pkg.get('operationalState')}, "
            f"vnfd {pkg['vnfdId']} ({pkg.get('vnfProductName')} {pkg.get('vnfSoftwareVersion')})"
        )

    def create(self) -> str:
        assert self.state.vnfd_id is not None
        inst = self.client.create_vnf(self.state.vnfd_id, "demo-k8s-cluster", "created by vnfm demo")
        self.state.vnf_id = inst["id"]
        return f"VNF instance {inst['id']} {inst.get('instantiationState')}"

    def instantiate_body(self) -> dict[str, Any]:
        return instantiate_request(self.flavour)

    def instantiate(self) -> str:
        assert self.state.vnf_id is not None
        body = self.instantiate_body()
        self._echo_request(body)
        return self._task(self.client.instantiate(self.state.vnf_id, body))

    def scale(self, kind: str, steps: int = 1) -> str:
        assert self.state.vnf_id is not None
        body = {"type": kind, "aspectId": WORKER_ASPECT, "numberOfSteps": steps}
        return self._task(self.client.scale(self.state.vnf_id, body))

    def heal_vnfc(self) -> str:
        assert self.state.vnf_id is not None
        before = self._show()
        vnfc = pick_worker_vnfc(before)
        old_server = server_of(before, vnfc["id"])
        self.echo(f"    healing VNFC {vnfc['id']} (VDU {vnfc.get('vduId')}, server {old_server})")
        op_id = self.client.heal(self.state.vnf_id, {"vnfcInstanceId": [vnfc["id"]], "cause": "vnfm demo"})
        run_task(self.client, op_id, self.echo, self.timeout)
        after = self._show()
        new_server = server_of(after, vnfc["id"])
        if new_server is None:
            raise StepFailed(f"VNFC {vnfc['id']} is gone after heal")
        return f"server {old_server} -> {new_server}; {describe_instance(after)}"

    def heal_entire(self) -> str:
        assert self.state.vnf_id is not None
        return self._task(self.client.heal(self.state.vnf_id, {"cause": "vnfm demo: heal entire VNF"}))

    def terminate(self) -> str:
        assert self.state.vnf_id is not None
        return self._task(self.client.terminate(self.state.vnf_id, {"terminationType": "FORCEFUL"}))

    def delete(self) -> str:
        assert self.state.vnf_id is not None
        self.client.delete_vnf(self.state.vnf_id)
        try:
            self.client.get_vnf(self.state.vnf_id)
        except ApiError as e:
            if e.status == 404:
                return f"VNF instance {self.state.vnf_id} deleted"
            raise
        raise StepFailed(f"VNF instance {self.state.vnf_id} still exists after DELETE")

    # --- the end ---
    def instance_state(self) -> str:
        """'VNF instance ID: <state>', or that it is gone."""
        try:
            return f"VNF instance {self.state.vnf_id}: {describe_instance(self._show())}"
        except ApiError as e:
            return f"VNF instance {self.state.vnf_id}: gone ({e.status})"

    def final_state(self) -> str:
        """The instance (if it still exists) and what the simulated cloud still holds."""
        parts: list[str] = []
        if self.state.vnf_id is not None:
            parts.append(self.instance_state())
        try:
            snap = self.client.sim_state()
        except (ApiError, ServerUnreachable) as e:
            parts.append(f"simulated cloud: not available ({e})")
        else:
            if isinstance(snap, dict):
                counts = [f"{k}={len(v)}" for k, v in snap.items() if isinstance(v, list | dict) and k != "faults"]
                parts.append("simulated cloud: " + (" ".join(counts) or "empty"))
        return "; ".join(parts)

    def steps(self, csar: bytes) -> list[Step]:
        return [
            ("onboard the example package", lambda: self.onboard(csar)),
            ("create the VNF instance", self.create),
            (f"instantiate (flavour {self.flavour})", self.instantiate),
            (f"scale out {WORKER_ASPECT} by 1", lambda: self.scale("SCALE_OUT")),
            (f"scale in {WORKER_ASPECT} by 1", lambda: self.scale("SCALE_IN")),
            ("heal one worker VNFC", self.heal_vnfc),
            ("heal the entire VNF", self.heal_entire),
            ("terminate", self.terminate),
            ("delete the VNF instance", self.delete),
        ]
