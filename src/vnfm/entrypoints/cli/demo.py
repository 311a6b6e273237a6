"""`vnfm demo`: the whole VNF lifecycle on the embedded simulated cloud.

The steps are plain functions of a VnfmClient (so tests can drive them against a fake server);
`run_demo` adds the in-process server and the example package.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vnfm.entrypoints.cli.client import ApiError, ServerUnreachable, VnfmClient
from vnfm.entrypoints.cli.output import mask_secrets, mask_text, render_table
from vnfm.entrypoints.cli.wait import WaitTimeout, describe_error, wait_for_op

Echo = Callable[[str], None]

WORKER_ASPECT = "worker_instance"
EXAMPLE_VNFD_IMAGE = "ubuntu-20.04-server-cloudimg-amd64"  # sw_image_data name of both VDUs


class StepFailed(Exception):
    pass


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


@dataclass
class StepResult:
    name: str
    ok: bool
    seconds: float
    summary: str = ""


@dataclass
class DemoState:
    vnfd_id: str | None = None
    pkg_id: str | None = None
    vnf_id: str | None = None
    results: list[StepResult] = field(default_factory=list)


def vnfcs_per_vdu(inst: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []:
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
    vnfcs = (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []
    if not vnfcs:
        raise StepFailed("the instance has no VNFCs to heal")
    workers = [v for v in vnfcs if "worker" in str(v.get("vduId", "")).lower()]
    chosen: dict[str, Any] = (workers or vnfcs)[-1]
    return chosen


def _server_of(inst: dict[str, Any], vnfc_id: str) -> str | None:
    for v in (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []:
        if v.get("id") == vnfc_id:
            return (v.get("computeResource") or {}).get("resourceId")
    return None


def _run_task(client: VnfmClient, op_id: str, echo: Echo, timeout: float) -> None:
    result = wait_for_op(client, op_id, timeout=timeout, on_change=lambda s, t: echo(f"      {s}  {t:.1f}s"))
    if not result.ok:
        detail = mask_text(describe_error(result.op)) or "no error details"
        raise StepFailed(f"vnfLcmOpOcc {op_id} ended {result.state}: {detail}")


def onboard_package(client: VnfmClient, csar: bytes, timeout: float = 60.0) -> dict[str, Any]:
    pkg = client.create_package({"origin": "vnfm demo"})
    client.upload_package(pkg["id"], csar)
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        pkg = client.get_package(pkg["id"])
        state = pkg.get("onboardingState")
        if state == "ONBOARDED":
            return pkg
        if state == "CREATED" or pkg.get("onboardingFailureDetails"):
            raise StepFailed(f"onboarding failed: {pkg.get('onboardingFailureDetails') or state}")
        if time.monotonic() > deadline:
            raise StepFailed(f"package still {state} after {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


class Demo:
    """The lifecycle steps; each prints its result and duration. `run` stops at the first failure."""

    def __init__(
        self, client: VnfmClient, echo: Echo, *, timeout: float = 300.0, flavour: str = "simple"
    ) -> None:
        self.client = client
        self.echo = echo
        self.timeout = timeout
        self.flavour = flavour
        self.state = DemoState()

    # --- framework ---
    def step(self, name: str, fn: Callable[[], str]) -> bool:
        n = len(self.state.results) + 1
        self.echo(f"==> {n}. {name}")
        start = time.monotonic()
        try:
            summary = fn()
            ok = True
        except (StepFailed, ApiError, WaitTimeout) as e:
            summary, ok = mask_text(str(e)), False
        except ServerUnreachable as e:
            summary, ok = str(e), False
        seconds = time.monotonic() - start
        self.state.results.append(StepResult(name, ok, seconds, summary))
        self.echo(f"    [{'OK' if ok else 'FAILED'}] {name} ({seconds:.2f}s): {summary}")
        return ok

    def _show(self) -> dict[str, Any]:
        assert self.state.vnf_id is not None
        return self.client.get_vnf(self.state.vnf_id)

    def _task(self, op_id: str) -> str:
        _run_task(self.client, op_id, self.echo, self.timeout)
        return describe_instance(self._show())

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

    def instantiate(self) -> str:
        assert self.state.vnf_id is not None
        body = instantiate_request(self.flavour)
        text = json.dumps(mask_secrets(body), indent=2)
        self.echo("    request: " + text.replace("\n", "\n    "))
        return self._task(self.client.instantiate(self.state.vnf_id, body))

    def scale(self, kind: str) -> str:
        assert self.state.vnf_id is not None
        body = {"type": kind, "aspectId": WORKER_ASPECT, "numberOfSteps": 1}
        return self._task(self.client.scale(self.state.vnf_id, body))

    def heal_vnfc(self) -> str:
        assert self.state.vnf_id is not None
        before = self._show()
        vnfc = pick_worker_vnfc(before)
        old_server = _server_of(before, vnfc["id"])
        self.echo(f"    healing VNFC {vnfc['id']} (VDU {vnfc.get('vduId')}, server {old_server})")
        op_id = self.client.heal(self.state.vnf_id, {"vnfcInstanceId": [vnfc["id"]], "cause": "vnfm demo"})
        _run_task(self.client, op_id, self.echo, self.timeout)
        after = self._show()
        new_server = _server_of(after, vnfc["id"])
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

    def final_state(self) -> str:
        """The instance (if it still exists) and what the simulated cloud still holds."""
        parts: list[str] = []
        if self.state.vnf_id is not None:
            try:
                parts.append(f"VNF instance {self.state.vnf_id}: {describe_instance(self._show())}")
            except ApiError as e:
                parts.append(f"VNF instance {self.state.vnf_id}: gone ({e.status})")
        try:
            snap = self.client.sim_state()
        except (ApiError, ServerUnreachable) as e:
            parts.append(f"simulated cloud: not available ({e})")
        else:
            if isinstance(snap, dict):
                counts = [f"{k}={len(v)}" for k, v in snap.items() if isinstance(v, list | dict) and k != "faults"]
                parts.append("simulated cloud: " + (" ".join(counts) or "empty"))
        return "; ".join(parts)

    def steps(self, csar: bytes) -> list[tuple[str, Callable[[], str]]]:
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

    def run(self, csar: bytes) -> bool:
        steps = self.steps(csar)
        start = time.monotonic()
        ok = True
        for name, fn in steps:
            if not self.step(name, fn):
                ok = False
                break
        total = time.monotonic() - start
        done = {r.name for r in self.state.results}
        rows = [
            {"step": r.name, "result": "OK" if r.ok else "FAILED", "seconds": f"{r.seconds:.2f}"}
            for r in self.state.results
        ] + [{"step": name, "result": "SKIPPED", "seconds": ""} for name, _ in steps if name not in done]
        self.echo("")
        self.echo(
            render_table(
                rows,
                [
                    ("STEP", lambda r: r["step"]),
                    ("RESULT", lambda r: r["result"]),
                    ("SECONDS", lambda r: r["seconds"]),
                ],
            )
        )
        self.echo(f"\nFinal state: {self.final_state()}")
        if ok:
            self.echo(f"\nDemo succeeded: {len(steps)} steps in {total:.2f}s")
        else:
            failed = self.state.results[-1]
            self.echo(f"\nDemo FAILED at '{failed.name}': {failed.summary}")
        return ok


def _node_name(vnfc_name: str) -> str:
    """The Kubernetes node name the driver gives a VNFC (RFC 1123: masterNode-0 -> masternode-0)."""
    n = re.sub(r"[^a-z0-9-]+", "-", vnfc_name.lower()).strip("-")[:63].strip("-")
    return n or "node"


class HaDemo(Demo):
    """`vnfm demo --scenario ha`: a 3-master HA cluster with 2 workers (flavour `ha`); scale out by 2
    and in by 1; heal a worker; heal a master; heal the entire VNF; terminate. After every step
    the Kubernetes twin's state (nodes, etcd, HAProxy backends per master, VIM) is printed and
    checked: a failed check fails the step (and the demo)."""

    def __init__(self, client: VnfmClient, echo: Echo, *, timeout: float = 300.0, flavour: str = "ha") -> None:
        super().__init__(client, echo, timeout=timeout, flavour=flavour)
        self.vim_id: str | None = None
        self.vim_credentials: tuple[Any, Any] | None = None

    # --- the twin's cluster ---
    def cluster(self) -> dict[str, Any]:
        assert self.state.vnf_id is not None
        snap = self.client.sim_state(self.state.vnf_id)
        k8s = snap.get("kubernetes") if isinstance(snap, dict) else None
        if not isinstance(k8s, dict):
            raise StepFailed(f"the simulated cloud shows no Kubernetes cluster for VNF instance {self.state.vnf_id}")
        return k8s

    def _print_cluster(self, k8s: dict[str, Any]) -> None:
        from vnfm.entrypoints.cli.main import render_cluster

        self.echo("    " + render_cluster(mask_secrets(k8s)).replace("\n", "\n    "))

    def _vnfc_names(self) -> dict[str, str]:
        """VNFC id -> VNFC name (the simulated cloud's deployment)."""
        assert self.state.vnf_id is not None
        snap = self.client.sim_state(self.state.vnf_id)
        out: dict[str, str] = {}
        for dep in snap.get("deployments") or []:
            for v in dep.get("vnfcs") or []:
                out[str(v.get("id"))] = str(v.get("name") or v.get("id"))
        return out

    def check_cluster(self) -> dict[str, Any]:
        """The cluster matches the instance's VNFCs: every node Ready and uncordoned, etcd has one
        healthy member per master, every master's HAProxy lists every master, the VIM is registered."""
        inst = self._show()
        counts = vnfcs_per_vdu(inst)
        n_masters = sum(v for k, v in counts.items() if "master" in k.lower())
        n_workers = sum(v for k, v in counts.items() if "worker" in k.lower())
        k8s = self.cluster()
        self._print_cluster(k8s)
        problems: list[str] = []
        nodes = k8s.get("nodes") or []
        masters = sorted(str(n["name"]) for n in nodes if n.get("role") == "master")
        workers = [n for n in nodes if n.get("role") == "worker"]
        if len(masters) != n_masters or len(workers) != n_workers:
            problems.append(f"cluster has {len(masters)} master(s) and {len(workers)} worker(s), the instance "
                            f"{n_masters} and {n_workers}")
        not_ready = [str(n["name"]) for n in nodes if not n.get("ready") or n.get("cordoned")]
        if not_ready:
            problems.append(f"node(s) not Ready or cordoned: {', '.join(not_ready)}")
        etcd = k8s.get("etcd") or {}
        members = sorted(str(m.get("name")) for m in etcd.get("members") or [])
        if members != masters or not etcd.get("healthy"):
            problems.append(f"etcd members {members} (healthy={etcd.get('healthy')}), expected {masters} healthy")
        lbs = k8s.get("haproxy") or []
        if n_masters > 1:
            if sorted(str(h.get("master")) for h in lbs) != masters:
                problems.append(f"HAProxy runs on {sorted(str(h.get('master')) for h in lbs)}, expected {masters}")
            for h in lbs:
                names = sorted(str(b.get("name")) for b in h.get("backends") or [])
                if names != masters:
                    problems.append(f"HAProxy on {h.get('master')} has backends {names}, expected {masters}")
        vim = k8s.get("vim")
        if not isinstance(vim, dict) or not vim.get("id"):
            problems.append("no Kubernetes VIM is registered for the cluster")
        if problems:
            raise StepFailed("; ".join(problems))
        return k8s

    def _summary(self, k8s: dict[str, Any]) -> str:
        nodes = k8s.get("nodes") or []
        etcd = k8s.get("etcd") or {}
        lbs = k8s.get("haproxy") or []
        return (f"{sum(1 for n in nodes if n.get('ready'))}/{len(nodes)} nodes Ready; etcd "
                f"{etcd.get('member_count')} member(s) {'healthy' if etcd.get('healthy') else 'UNHEALTHY'}; "
                f"HAProxy backends {'/'.join(str(h.get('backend_count')) for h in lbs) or '-'}")

    def _vim_credentials(self, k8s: dict[str, Any]) -> tuple[Any, Any]:
        vim = k8s.get("vim") or {}
        return vim.get("ca_sha256"), vim.get("auth_digest")

    # --- steps ---
    def instantiate(self) -> str:
        text = super().instantiate()
        k8s = self.check_cluster()
        vim = k8s["vim"]
        self.vim_id = str(vim["id"])
        self.vim_credentials = self._vim_credentials(k8s)
        registered = self.client.get_vim(self.vim_id)
        if registered.get("vimType") != "kubernetes":
            raise StepFailed(f"VIM {self.vim_id} is registered as {registered.get('vimType')!r}")
        return f"{text}; {self._summary(k8s)}; VIM {self.vim_id} at {vim.get('endpoint')}"

    def scale_by(self, kind: str, steps: int) -> str:
        assert self.state.vnf_id is not None
        body = {"type": kind, "aspectId": WORKER_ASPECT, "numberOfSteps": steps}
        text = self._task(self.client.scale(self.state.vnf_id, body))
        return f"{text}; {self._summary(self.check_cluster())}"

    def _heal_one(self, role: str) -> str:
        assert self.state.vnf_id is not None
        before = self._show()
        vnfcs = (before.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []
        of_role = [v for v in vnfcs if role in str(v.get("vduId", "")).lower()]
        if not of_role:
            raise StepFailed(f"the instance has no {role} VNFC to heal")
        vnfc = of_role[0]
        node = _node_name(self._vnfc_names().get(str(vnfc["id"]), str(vnfc["id"])))
        old_server = _server_of(before, vnfc["id"])
        self.echo(f"    healing {role} VNFC {vnfc['id']} (node {node}, server {old_server})")
        op_id = self.client.heal(self.state.vnf_id, {"vnfcInstanceId": [vnfc["id"]], "cause": f"vnfm demo: {role}"})
        _run_task(self.client, op_id, self.echo, self.timeout)
        new_server = _server_of(self._show(), vnfc["id"])
        if new_server is None or new_server == old_server:
            raise StepFailed(f"VNFC {vnfc['id']} was not replaced (server {old_server} -> {new_server})")
        k8s = self.check_cluster()
        back = [n for n in k8s.get("nodes") or [] if n.get("name") == node]
        if not back or not back[0].get("ready"):
            raise StepFailed(f"node {node} did not come back Ready under the same name")
        return f"node {node}: server {old_server} -> {new_server}, Ready again; {self._summary(k8s)}"

    def heal_worker(self) -> str:
        return self._heal_one("worker")

    def heal_master(self) -> str:
        text = self._heal_one("master")
        k8s = self.cluster()
        etcd = k8s.get("etcd") or {}
        self.echo(f"    etcd: {etcd.get('member_count')} member(s), "
                  f"{'all healthy' if etcd.get('healthy') else 'NOT all healthy'}")
        for h in k8s.get("haproxy") or []:
            names = ", ".join(str(b.get("name")) for b in h.get("backends") or [])
            self.echo(f"    HAProxy on {h.get('master')}: {h.get('backend_count')} backend(s): {names}")
        if etcd.get("member_count") != 3 or not etcd.get("healthy"):
            raise StepFailed(f"etcd has {etcd.get('member_count')} member(s), healthy={etcd.get('healthy')}; "
                             "expected 3 healthy")
        bad = [str(h.get("master")) for h in k8s.get("haproxy") or [] if h.get("backend_count") != 3]
        if bad or len(k8s.get("haproxy") or []) != 3:
            raise StepFailed(f"not every master's HAProxy lists 3 backends (wrong: {', '.join(bad) or 'count'})")
        return text

    def heal_entire(self) -> str:
        text = super().heal_entire()
        k8s = self.check_cluster()
        vim_id = str((k8s.get("vim") or {}).get("id"))
        creds = self._vim_credentials(k8s)
        self.echo(f"    VIM id before {self.vim_id}, after {vim_id}: {'same' if vim_id == self.vim_id else 'CHANGED'}")
        changed = self.vim_credentials is not None and all(
            a != b for a, b in zip(creds, self.vim_credentials, strict=True))
        self.echo(f"    VIM credentials (CA digest, token digest): "
                  f"{'changed' if changed else 'NOT changed'}")
        if vim_id != self.vim_id:
            raise StepFailed(f"the VIM id changed from {self.vim_id} to {vim_id}: CNFs on it would be orphaned")
        if not changed:
            raise StepFailed("the VIM's CA and token did not both change after the cluster was rebuilt")
        registered = self.client.get_vim(vim_id)
        endpoint = (registered.get("interfaceInfo") or {}).get("endpoint")
        cluster_endpoint = (k8s.get("vim") or {}).get("endpoint")
        if endpoint != cluster_endpoint:
            raise StepFailed(f"VIM {vim_id} points at {endpoint}, the cluster is at {cluster_endpoint}")
        self.vim_credentials = creds
        return f"{text}; VIM {vim_id} kept, credentials rotated; {self._summary(k8s)}"

    def terminate(self) -> str:
        text = super().terminate()
        assert self.vim_id is not None
        try:
            self.client.get_vim(self.vim_id)
        except ApiError as e:
            if e.status != 404:
                raise
        else:
            raise StepFailed(f"VIM {self.vim_id} is still registered after terminate")
        if any(v.get("id") == self.vim_id for v in self.client.list_vims()):
            raise StepFailed(f"VIM {self.vim_id} is still listed after terminate")
        try:
            snap = self.client.sim_state(self.state.vnf_id)
        except ApiError as e:
            if e.status != 404:
                raise
            snap = {}
        if isinstance(snap, dict) and (snap.get("kubernetes") or snap.get("servers")):
            raise StepFailed("the simulated cloud still holds the cluster after terminate")
        self.echo(f"    VIM {self.vim_id}: gone (404)")
        return f"{text}; VIM {self.vim_id} deregistered, no servers left"

    def steps(self, csar: bytes) -> list[tuple[str, Callable[[], str]]]:
        return [
            ("onboard the example package", lambda: self.onboard(csar)),
            ("create the VNF instance", self.create),
            (f"instantiate (flavour {self.flavour}: 3 masters, 2 workers)", self.instantiate),
            (f"scale out {WORKER_ASPECT} by 2", lambda: self.scale_by("SCALE_OUT", 2)),
            (f"scale in {WORKER_ASPECT} by 1", lambda: self.scale_by("SCALE_IN", 1)),
            ("heal a worker VNFC", self.heal_worker),
            ("heal a master VNFC", self.heal_master),
            ("heal the entire VNF", self.heal_entire),
            ("terminate (VIM deregistered)", self.terminate),
            ("delete the VNF instance", self.delete),
        ]


class OpenStackDemo(Demo):
    """`vnfm demo --vim openstack --openrc PATH`: the default lifecycle on a real OpenStack (Heat).

    The cloud of the openrc file is registered as a VIM (POST /vnfm/v1/vims) and named by the
    instantiate request's vimConnectionInfo; the VNF's CPs go on one existing network (given by
    name or id). After every step the servers of the instance are looked up in Nova (each must be
    ACTIVE) and their ports in Neutron (ids and addresses as the instance reports them). The
    hooks of the example package are bound to the `noop` management driver (run_demo does that):
    the demo installs no Kubernetes on the servers."""

    def __init__(
        self,
        client: VnfmClient,
        echo: Echo,
        *,
        openrc: dict[str, str],
        network: str = "vnfm-ci-net",
        image: str | None = None,
        timeout: float = 600.0,
        flavour: str = "simple",
    ) -> None:
        super().__init__(client, echo, timeout=timeout, flavour=flavour)
        self.openrc = openrc
        self.network = network
        self.image = image
        self.vim_id: str | None = None
        self.network_id: str | None = None
        self._cloud: Any = None

    def cloud(self) -> Any:
        """An SdkCloud on the same credentials, to check what Nova and Neutron report."""
        if self._cloud is None:
            from vnfm.adapters.infra.openstack.cloud import SdkCloud
            from vnfm.adapters.infra.openstack.openrc import access_info
            from vnfm.domain.model import Vim

            self._cloud = SdkCloud(Vim(vim_type="openstack", name="demo-check", access_info=access_info(self.openrc)))
        return self._cloud

    def close(self) -> None:
        if self._cloud is not None:
            self._cloud.close()
            self._cloud = None

    # --- steps ---
    def register_vim(self) -> str:
        from vnfm.adapters.infra.openstack.openrc import access_info

        try:
            info = access_info(self.openrc)
        except ValueError as e:
            raise StepFailed(str(e)) from None
        try:
            cloud = self.cloud()
            net = cloud.conn.network.find_network(self.network)
        except Exception as e:  # noqa: BLE001 - any SDK/auth error ends the step with its message
            raise StepFailed(f"the OpenStack cloud does not answer: {mask_text(str(e))[:300]}") from None
        if net is None:
            raise StepFailed(f"network {self.network!r} does not exist in the cloud (give one with --network)")
        self.network_id = str(net.id)
        image = self.image or EXAMPLE_VNFD_IMAGE
        if cloud.find_image(image) is None:
            raise StepFailed(
                f"image {image!r} is not in Glance: upload it, or name an existing one with --image "
                "(the local bring-up of ci/openstack has vnfm-ci-image)"
            )
        body = {"name": "demo-openstack", "vimType": "openstack", "accessInfo": info}
        vim = self.client.register_vim(body)
        self.vim_id = str(vim["id"])
        shown = self.client.get_vim(self.vim_id)
        return (
            f"VIM {self.vim_id} at {info['authUrl']} (accessInfo as the API shows it: "
            f"{json.dumps(shown.get('accessInfo'))}); network {self.network} = {self.network_id}; "
            f"image {image}"
        )

    def instantiate_body(self) -> dict[str, Any]:
        assert self.vim_id is not None and self.network_id is not None
        body = instantiate_request(self.flavour)
        body["vimConnectionInfo"] = [{"id": "demo-vim-connection", "vimId": self.vim_id, "vimType": "openstack"}]
        cp_cfg = [{"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET"}]}]
        body["extVirtualLinks"] = [
            {"id": f"net-{cpd}", "resourceId": self.network_id, "extCps": [{"cpdId": cpd, "cpConfig": cp_cfg}]}
            for cpd in ("masterNode_CP1", "workerNode_CP2")
        ]
        if self.image:
            body["additionalParams"]["nfv"] = {
                "VDU": {"masterNode": {"image": self.image}, "workerNode": {"image": self.image}}
            }
        return body

    def instantiate(self) -> str:
        assert self.state.vnf_id is not None
        body = self.instantiate_body()
        self.echo("    request: " + json.dumps(mask_secrets(body), indent=2).replace("\n", "\n    "))
        return self._task(self.client.instantiate(self.state.vnf_id, body))

    def _task(self, op_id: str) -> str:
        text = super()._task(op_id)
        return f"{text}; {self.check_cloud()}"

    def heal_vnfc(self) -> str:
        text = super().heal_vnfc()
        return f"{text}; {self.check_cloud()}"

    def check_cloud(self) -> str:
        """Every VNFC's server is ACTIVE in Nova, its ports in Neutron are the reported ones."""
        inst = self._show()
        vnfcs = (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo") or []
        cloud = self.cloud()
        problems: list[str] = []
        for v in vnfcs:
            sid = str((v.get("computeResource") or {}).get("resourceId"))
            server = cloud.get_server(sid)
            if server is None or server.get("status") != "ACTIVE":
                problems.append(f"server {sid}: {'missing' if server is None else server.get('status')}")
                continue
            nova_ports = {str(p["id"]): sorted(f["ip_address"] for f in p.get("fixed_ips") or [])
                          for p in cloud.server_ports(sid)}
            reported: dict[str, list[str]] = {}
            for cp in v.get("vnfcCpInfo") or []:
                addrs = [a for pr in cp.get("cpProtocolInfo") or []
                         for ip in (pr.get("ipOverEthernet") or {}).get("ipAddresses") or []
                         for a in ip.get("addresses") or []]
                reported[str(cp.get("vnfLinkPortId"))] = sorted(addrs)
            if nova_ports != reported:
                problems.append(f"VNFC {v.get('id')}: Neutron has ports {nova_ports}, the instance reports {reported}")
            else:
                ports = ", ".join(f"{pid[:8]} {'/'.join(a)}" for pid, a in reported.items())
                self.echo(f"      {v.get('vduId')}: server {sid} ACTIVE; port {ports}")
        if problems:
            raise StepFailed("the cloud disagrees: " + "; ".join(problems))
        if not vnfcs:
            from vnfm.adapters.infra.openstack.driver import stack_name_of

            assert self.state.vnf_id is not None
            if cloud.find_stack(stack_name_of(self.state.vnf_id)) is not None:
                raise StepFailed("the instance has no VNFCs but its Heat stack still exists")
            return "no stack left in Heat"
        return f"{len(vnfcs)} server(s) ACTIVE in Nova with the reported ports"

    def deregister_vim(self) -> str:
        assert self.vim_id is not None
        self.client.delete_vim(self.vim_id)
        return f"VIM {self.vim_id} deregistered"

    def final_state(self) -> str:
        parts: list[str] = []
        if self.state.vnf_id is not None:
            try:
                parts.append(f"VNF instance {self.state.vnf_id}: {describe_instance(self._show())}")
            except ApiError as e:
                parts.append(f"VNF instance {self.state.vnf_id}: gone ({e.status})")
            try:
                from vnfm.adapters.infra.openstack.driver import stack_name_of

                stack = self.cloud().find_stack(stack_name_of(self.state.vnf_id))
                parts.append("Heat stack: " + (f"{stack['stack_name']} {stack['stack_status']}" if stack else "none"))
            except Exception as e:  # noqa: BLE001 - only a report
                parts.append(f"Heat: not available ({mask_text(str(e))[:200]})")
        return "; ".join(parts)

    def steps(self, csar: bytes) -> list[tuple[str, Callable[[], str]]]:
        base = super().steps(csar)
        return [("register the OpenStack cloud as a VIM", self.register_vim), *base,
                ("deregister the VIM", self.deregister_vim)]


SCENARIOS = ("default", "ha")


def _csar_from(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, io.BytesIO):
        return value.getvalue()
    if isinstance(value, str | Path):
        from vnfm.entrypoints.cli.main import csar_bytes

        return csar_bytes(Path(value))
    raise TypeError(f"example_csar() returned {type(value).__name__}")


def run_demo(
    *,
    data_dir: Path | None = None,
    keep: bool = False,
    flavour: str | None = None,
    timeout: float = 300.0,
    echo: Echo = print,
    scenario: str = "default",
    vim: str = "simulator",
    openrc: Path | None = None,
    network: str = "vnfm-ci-net",
    image: str | None = None,
) -> bool:
    """Start a server in this process on a free port with a fresh data dir, run the Demo (scenario
    "default", flavour simple unless given; or "ha", flavour ha unless given), stop.

    vim="openstack": the default scenario on the OpenStack cloud of the `openrc` file (registered
    as a VIM; CPs on `network`; `image` instead of the VNFD's image when given), with the
    package's hooks bound to the noop management driver."""
    if scenario not in SCENARIOS:
        echo(f"Error: unknown demo scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
        return False
    openrc_env: dict[str, str] = {}
    if vim == "openstack":
        if scenario != "default":
            echo("Error: --vim openstack runs the default scenario only")
            return False
        if openrc is None:
            echo("Error: --vim openstack needs --openrc PATH (an openrc file with OS_AUTH_URL, OS_USERNAME, ...)")
            return False
        from vnfm.adapters.infra.openstack.openrc import read_openrc

        try:
            openrc_env = read_openrc(openrc)
        except OSError as e:
            echo(f"Error: cannot read {openrc}: {e.strerror}")
            return False
        if not openrc_env.get("OS_AUTH_URL"):
            echo(f"Error: {openrc} has no OS_AUTH_URL")
            return False
    elif vim != "simulator":
        echo(f"Error: unknown demo VIM {vim!r} (known: simulator, openstack)")
        return False
    try:
        from vnfm.config import Settings
        from vnfm.entrypoints.api.server import start_in_thread
        from vnfm.examples import example_csar
    except ImportError as e:
        echo(f"Error: this installation lacks a part the demo needs ({e})")
        return False
    tmp: Path | None = None
    if data_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="vnfm-demo-"))
        data_dir = tmp
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        data_dir=data_dir, database_url=f"sqlite:///{data_dir / 'vnfm.db'}", host="127.0.0.1", port=0
    )
    where = "the simulated cloud"
    if vim == "openstack":
        # The example package's hooks name the Kubernetes driver, which would SSH into the servers.
        settings.driver_bindings = ",".join(filter(None, [settings.driver_bindings, "mgmt-drivers-kubernetes=noop"]))
        where = f"OpenStack at {openrc_env['OS_AUTH_URL']}, hooks bound to the noop driver"
    echo(f"Starting the vnfm server in this process (data: {data_dir}, VIM: {where})")
    try:
        handle = start_in_thread(settings)
    except Exception as e:  # noqa: BLE001 - reported, then non-zero exit
        echo(f"Error: the server did not start: {mask_text(str(e))}")
        _cleanup(tmp, keep, data_dir, echo)
        return False
    try:
        echo(f"Server listening at {handle.url}\n")
        with VnfmClient(handle.url) as client:
            demo: Demo
            if vim == "openstack":
                os_demo = OpenStackDemo(client, echo, openrc=openrc_env, network=network, image=image,
                                        timeout=timeout, flavour=flavour or "simple")
                try:
                    return os_demo.run(_csar_from(example_csar()))
                finally:
                    os_demo.close()
            if scenario == "ha":
                demo = HaDemo(client, echo, timeout=timeout, flavour=flavour or "ha")
            else:
                demo = Demo(client, echo, timeout=timeout, flavour=flavour or "simple")
            return demo.run(_csar_from(example_csar()))
    finally:
        handle.stop()
        _cleanup(tmp, keep, data_dir, echo)


def _cleanup(tmp: Path | None, keep: bool, data_dir: Path, echo: Echo) -> None:
    if keep or tmp is None:
        echo(f"Data kept in {data_dir} (look at it with: vnfm server --data-dir {data_dir})")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
