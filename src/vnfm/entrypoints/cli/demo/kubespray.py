"""`vnfm demo --scenario kubespray`: seed 002's Kubespray cluster (an Ansible server outside the
VNF, an external load-balancer VM) through its whole lifecycle on the simulated cloud, with the
state view (`kubespray.inventory`, `kubespray.runs`, `external_lb.frontends`) printed and checked
after every step."""

from __future__ import annotations

import copy
from typing import Any

from vnfm.entrypoints.cli.client import ApiError, VnfmClient
from vnfm.entrypoints.cli.demo.basic import WORKER_ASPECT, Demo, vnfcs_of
from vnfm.entrypoints.cli.demo.runner import Echo, Step, StepFailed

ANSIBLE = "10.10.0.50"
OTHER_ANSIBLE = "10.10.0.23"
INVENTORY = "/home/ubuntu/kubespray-2.16.0/inventory/mycluster"
ROOT_PATH = "/home/ubuntu/kubespray-2.16.0"


def kubespray_request() -> dict[str, Any]:
    """Seed 002's simple_kubernetes_param_file.json (no vimConnectionInfo: the simulated cloud)."""
    pw = "ubuntu"  # the simulated VMs' demo login, as in the seed
    return {
        "flavourId": "simple",
        "additionalParams": {
            "k8s_cluster_installation_param": {
                "vim_name": "kubernetes_vim",
                "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_FloatingIP",
                                "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": pw,
                                "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24"},
                "worker_node": {"aspect_id": WORKER_ASPECT, "ssh_cp_name": "workerNode_FloatingIP",
                                "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": pw},
                "proxy": {"http_proxy": "http://user1:password1@host1:3128",
                          "https_proxy": "https://user2:password2@host2:3128"},
                "ansible": {"ip_address": ANSIBLE, "username": "ubuntu", "password": pw,
                            "kubespray_root_path": ROOT_PATH, "transferring_inventory_path": INVENTORY},
                "external_lb_param": {"ssh_cp_name": "externalLB_FloatingIP", "ssh_username": "ubuntu",
                                      "ssh_password": pw, "script_path": "Scripts/install_external_lb.sh"},
            },
        },
    }


def overrides() -> dict[str, Any]:
    """Seed 002's scale/heal additionalParams: whole dicts, another Ansible server."""
    root = copy.deepcopy(kubespray_request()["additionalParams"]["k8s_cluster_installation_param"])
    root["ansible"] = {**root["ansible"], "ip_address": OTHER_ANSIBLE, "username": "ansible"}
    return {"k8s_cluster_installation_param": {k: root[k] for k in ("worker_node", "ansible", "external_lb_param")}}


def run_line(run: dict[str, Any]) -> str:
    limit = run.get("limit")
    return f"{run.get('playbook')}{' --limit ' + ','.join(limit) if limit else ''}"


class KubesprayDemo(Demo):
    """Onboard the Kubespray example package; instantiate; scale out (plain, then with seed 002's
    overrides naming another Ansible server) and in (with, then without); heal a worker; a master
    heal refused (422); heal entire (same VIM); terminate (inventories removed); delete."""

    def __init__(self, client: VnfmClient, echo: Echo, *, timeout: float = 300.0, flavour: str = "simple") -> None:
        super().__init__(client, echo, timeout=timeout, flavour=flavour)
        self.vim_id: str | None = None

    def instantiate_body(self) -> dict[str, Any]:
        body = kubespray_request()
        body["flavourId"] = self.flavour
        return body

    # --- the state view ---
    def view(self) -> dict[str, Any]:
        assert self.state.vnf_id is not None
        snap = self.client.sim_state(self.state.vnf_id)
        if not isinstance(snap, dict) or "kubespray" not in snap or "external_lb" not in snap:
            raise StepFailed("the simulated cloud shows no Kubespray inventory or external LB for the instance")
        ks, lb = snap["kubespray"], snap["external_lb"]
        groups = ks.get("inventory") or {}
        self.echo(f"    inventory on {ks.get('ansible_server')}:{ks.get('inventory_path')}: "
                  + "; ".join(f"{g}=[{', '.join(h)}]" for g, h in groups.items()))
        self.echo(f"    playbook runs: {', '.join(run_line(r) for r in ks.get('runs') or [])}")
        fronts = "; ".join(f"*:{p} -> {', '.join(b)}" for p, b in (lb.get("frontends") or {}).items())
        pool = (lb.get("pools") or {}).get("nodeport") or []
        self.echo(f"    external LB {lb.get('address')}: {fronts}; NodePort pool of {len(pool)} node(s)")
        workers = sum(1 for v in vnfcs_of(self._show()) if "worker" in str(v.get("vduId", "")).lower())
        if len(groups.get("kube_node") or []) != workers or len(pool) != workers + 1:
            raise StepFailed(f"the inventory lists {len(groups.get('kube_node') or [])} worker(s) and the LB "
                             f"pool {len(pool)} node(s); the instance has {workers} worker VNFC(s)")
        return dict(snap)

    def expect_last_runs(self, snap: dict[str, Any], *want: str) -> None:
        got = [run_line(r) for r in snap["kubespray"].get("runs") or []][-len(want):]
        if got != list(want):
            raise StepFailed(f"last playbook runs {got}, expected {list(want)}")

    # --- steps ---
    def instantiate(self) -> str:
        text = super().instantiate()
        snap = self.view()
        self.expect_last_runs(snap, "cluster.yml")
        k8s = [v for v in self._show().get("vimConnectionInfo") or [] if v.get("vimType") == "kubernetes"]
        if len(k8s) != 1:
            raise StepFailed("no Kubernetes VIM in the instance's vimConnectionInfo")
        self.vim_id = str(k8s[0]["vimId"])
        vim = self.client.get_vim(self.vim_id)
        return f"{text}; VIM {self.vim_id} at {(vim.get('interfaceInfo') or {}).get('endpoint')}"

    def scale_step(self, kind: str, extra: dict[str, Any] | None = None) -> str:
        assert self.state.vnf_id is not None
        body: dict[str, Any] = {"type": kind, "aspectId": WORKER_ASPECT, "numberOfSteps": 1}
        if extra:
            body["additionalParams"] = extra
        text = self._task(self.client.scale(self.state.vnf_id, body))
        snap = self.view()
        last = snap["kubespray"]["runs"][-1]
        if kind == "SCALE_OUT" and (last.get("playbook") != "scale.yml" or not last.get("limit")):
            raise StepFailed(f"the last run is {run_line(last)}, expected scale.yml --limit <new node>")
        if kind == "SCALE_IN" and last.get("playbook") != "remove-node.yml":
            raise StepFailed(f"the last run is {run_line(last)}, expected remove-node.yml")
        return f"{text}; on the Ansible server {snap['kubespray']['ansible_server']}"

    def heal_worker(self) -> str:
        text = self.heal_vnfc()
        snap = self.view()
        self.expect_last_runs(snap, "facts.yml", run_line(snap["kubespray"]["runs"][-1]))
        return f"{text}; {run_line(snap['kubespray']['runs'][-1])}"

    def heal_master_refused(self) -> str:
        assert self.state.vnf_id is not None
        master = next((v for v in vnfcs_of(self._show()) if "master" in str(v.get("vduId", "")).lower()), None)
        if master is None:
            raise StepFailed("the instance has no master VNFC")
        try:
            self.client.heal(self.state.vnf_id, {"vnfcInstanceId": [master["id"]]})
        except ApiError as e:
            if e.status != 422:
                raise
            self.echo(f"    refused: {e}")
            return "422, as expected (a single control plane is healed by healing the entire VNF)"
        raise StepFailed("healing the single master was accepted")

    def heal_entire(self) -> str:
        text = super().heal_entire()
        snap = self.view()
        self.expect_last_runs(snap, "cluster.yml")
        k8s = [v for v in self._show().get("vimConnectionInfo") or [] if v.get("vimType") == "kubernetes"]
        if [str(v["vimId"]) for v in k8s] != [self.vim_id]:
            raise StepFailed(f"the Kubernetes VIM changed: {[v['vimId'] for v in k8s]}, was {self.vim_id}")
        return f"{text}; VIM {self.vim_id} kept"

    def terminate(self) -> str:
        text = super().terminate()
        left = {addr: list(h.get("inventories") or {})
                for addr, h in (self.client.sim_state().get("operator_hosts") or {}).items()}
        self.echo(f"    Ansible servers' inventories: {left}")
        if any(left.values()):
            raise StepFailed(f"inventories left on the Ansible servers: {left}")
        return f"{text}; inventories removed from {', '.join(sorted(left))}"

    def steps(self, csar: bytes) -> list[Step]:
        return [
            ("onboard the Kubespray example package", lambda: self.onboard(csar)),
            ("create the VNF instance", self.create),
            ("instantiate (seed 002 request: 1 master, 2 workers, external LB)", self.instantiate),
            (f"scale out {WORKER_ASPECT} by 1", lambda: self.scale_step("SCALE_OUT")),
            ("scale out by 1 with whole-dict overrides (another Ansible server)",
             lambda: self.scale_step("SCALE_OUT", overrides())),
            ("scale in by 1 with the same overrides", lambda: self.scale_step("SCALE_IN", overrides())),
            (f"scale in {WORKER_ASPECT} by 1", lambda: self.scale_step("SCALE_IN")),
            ("heal one worker VNFC", self.heal_worker),
            ("heal the single master: refused", self.heal_master_refused),
            ("heal the entire VNF (inventory replaced, VIM kept)", self.heal_entire),
            ("terminate (inventories removed)", self.terminate),
            ("delete the VNF instance", self.delete),
        ]
