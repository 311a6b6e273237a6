"""`vnfm demo --scenario ha`: a 3-master HA cluster, with the Kubernetes twin's state printed and
checked after every step."""

from __future__ import annotations

import re
from typing import Any

from vnfm.entrypoints.cli.client import ApiError, VnfmClient
from vnfm.entrypoints.cli.demo.basic import WORKER_ASPECT, Demo, server_of, vnfcs_of, vnfcs_per_vdu
from vnfm.entrypoints.cli.demo.runner import Echo, Step, StepFailed, run_task
from vnfm.entrypoints.cli.output import mask_secrets
from vnfm.entrypoints.cli.render import render_cluster


def node_name(vnfc_name: str) -> str:
    """The Kubernetes node name the driver gives a VNFC (RFC 1123: masterNode-0 -> masternode-0)."""
    n = re.sub(r"[^a-z0-9-]+", "-", vnfc_name.lower()).strip("-")[:63].strip("-")
    return n or "node"


def cluster_problems(k8s: dict[str, Any], n_masters: int, n_workers: int) -> list[str]:
    """What is wrong with the cluster for an instance of `n_masters` and `n_workers` VNFCs: every
    node Ready and uncordoned, etcd has one healthy member per master, every master's HAProxy lists
    every master, the VIM is registered."""
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
    return problems


def cluster_summary(k8s: dict[str, Any]) -> str:
    nodes = k8s.get("nodes") or []
    etcd = k8s.get("etcd") or {}
    lbs = k8s.get("haproxy") or []
    return (f"{sum(1 for n in nodes if n.get('ready'))}/{len(nodes)} nodes Ready; etcd "
            f"{etcd.get('member_count')} member(s) {'healthy' if etcd.get('healthy') else 'UNHEALTHY'}; "
            f"HAProxy backends {'/'.join(str(h.get('backend_count')) for h in lbs) or '-'}")


def vim_credentials(k8s: dict[str, Any]) -> tuple[Any, Any]:
    """The registered VIM's (CA digest, token digest) as the twin reports them."""
    vim = k8s.get("vim") or {}
    return vim.get("ca_sha256"), vim.get("auth_digest")


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
        """Print the cluster; StepFailed unless it matches the instance's VNFCs (cluster_problems)."""
        counts = vnfcs_per_vdu(self._show())
        n_masters = sum(v for k, v in counts.items() if "master" in k.lower())
        n_workers = sum(v for k, v in counts.items() if "worker" in k.lower())
        k8s = self.cluster()
        self.echo("    " + render_cluster(mask_secrets(k8s)).replace("\n", "\n    "))
        problems = cluster_problems(k8s, n_masters, n_workers)
        if problems:
            raise StepFailed("; ".join(problems))
        return k8s

    # --- steps ---
    def instantiate(self) -> str:
        text = super().instantiate()
        k8s = self.check_cluster()
        vim = k8s["vim"]
        self.vim_id = str(vim["id"])
        self.vim_credentials = vim_credentials(k8s)
        registered = self.client.get_vim(self.vim_id)
        if registered.get("vimType") != "kubernetes":
            raise StepFailed(f"VIM {self.vim_id} is registered as {registered.get('vimType')!r}")
        return f"{text}; {cluster_summary(k8s)}; VIM {self.vim_id} at {vim.get('endpoint')}"

    def scale_by(self, kind: str, steps: int) -> str:
        text = self.scale(kind, steps)
        return f"{text}; {cluster_summary(self.check_cluster())}"

    def _heal_one(self, role: str) -> str:
        assert self.state.vnf_id is not None
        before = self._show()
        of_role = [v for v in vnfcs_of(before) if role in str(v.get("vduId", "")).lower()]
        if not of_role:
            raise StepFailed(f"the instance has no {role} VNFC to heal")
        vnfc = of_role[0]
        node = node_name(self._vnfc_names().get(str(vnfc["id"]), str(vnfc["id"])))
        old_server = server_of(before, vnfc["id"])
        self.echo(f"    healing {role} VNFC {vnfc['id']} (node {node}, server {old_server})")
        op_id = self.client.heal(self.state.vnf_id, {"vnfcInstanceId": [vnfc["id"]], "cause": f"vnfm demo: {role}"})
        run_task(self.client, op_id, self.echo, self.timeout)
        new_server = server_of(self._show(), vnfc["id"])
        if new_server is None or new_server == old_server:
            raise StepFailed(f"VNFC {vnfc['id']} was not replaced (server {old_server} -> {new_server})")
        k8s = self.check_cluster()
        back = [n for n in k8s.get("nodes") or [] if n.get("name") == node]
        if not back or not back[0].get("ready"):
            raise StepFailed(f"node {node} did not come back Ready under the same name")
        return f"node {node}: server {old_server} -> {new_server}, Ready again; {cluster_summary(k8s)}"

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
        creds = vim_credentials(k8s)
        self.echo(f"    VIM id before {self.vim_id}, after {vim_id}: {'same' if vim_id == self.vim_id else 'CHANGED'}")
        # the token must change; the CA is the one of the API the VNFM reaches (the simulated cloud
        # serves every cluster's API with its own CA, which stays)
        changed = self.vim_credentials is not None and creds[1] != self.vim_credentials[1]
        self.echo(f"    VIM token: {'changed' if changed else 'NOT changed'}; CA "
                  f"{'changed' if self.vim_credentials and creds[0] != self.vim_credentials[0] else 'kept'}")
        if vim_id != self.vim_id:
            raise StepFailed(f"the VIM id changed from {self.vim_id} to {vim_id}: CNFs on it would be orphaned")
        if not changed:
            raise StepFailed("the VIM's token did not change after the cluster was rebuilt")
        registered = self.client.get_vim(vim_id)
        endpoint = (registered.get("interfaceInfo") or {}).get("endpoint")
        cluster_endpoint = (k8s.get("vim") or {}).get("endpoint")
        if endpoint != cluster_endpoint:
            raise StepFailed(f"VIM {vim_id} points at {endpoint}, the cluster is at {cluster_endpoint}")
        self.vim_credentials = creds
        return f"{text}; VIM {vim_id} kept, credentials rotated; {cluster_summary(k8s)}"

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

    def steps(self, csar: bytes) -> list[Step]:
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
