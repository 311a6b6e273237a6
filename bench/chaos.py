"""Fault-injection campaign against `vnfm server` on the simulated cloud (issue 12).

Each round sends one LCM request (instantiate, scale out / in, heal a worker or a master, terminate,
change_vnfpkg: a Kubernetes upgrade one minor up to the next release of the example package)
to a server process, and (most rounds) SIGKILLs that process from outside: after a random delay, or
when the occurrence's progress log shows it inside a chosen stage (a management driver hook such as
`scale_end`, or the infrastructure step); with two servers some rounds SIGSTOP it instead until the
other server took the occurrence over, then SIGCONT it (a paused owner must change nothing). Some
rounds also inject a cloud fault (failed build, unreachable VM, failed delete) through
`POST /sim/v1/faults`. The killed server is restarted; the occurrence (found by listing the
instance's occurrences when the 202 was lost) is then resolved by retry or rollback (rollback of
instantiate / scale-out / scale-in / change_vnfpkg, else retry), with further kills on some attempts, until it is
final. After the round the invariants of `chaos_invariants.py` are checked against the simulated
cloud.

With `--servers 2` two processes share the database (PostgreSQL: `--database-url`, or `--postgres`
to start a throwaway cluster as the tests do) and the data dir; requests go to either, and a
killed server's occurrence is taken over by the other.

    .venv/bin/python bench/chaos.py --rounds 50 [--seed 1] [--servers 2 --postgres] [--json]

Exit status 0 when every invariant held and every occurrence was resolved, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from chaos_invariants import check

from vnfm.entrypoints.cli.demo import instantiate_request
from vnfm.examples import example_csar, example_csar_version

LCM = "/vnflcm/v1"
FINAL = {"COMPLETED", "FAILED", "ROLLED_BACK"}
KILL_STAGES = {
    "INSTANTIATE": ["infra_deploy", "instantiate_end"],
    "SCALE": ["scale_start", "infra_update", "scale_end"],
    "HEAL": ["heal_start", "infra_heal", "heal_end"],
    "TERMINATE": ["terminate_start", "infra_undeploy", "terminate_end"],
    "CHANGE_VNFPKG": ["upgrade_snapshot", "upgrade_control_plane", "upgrade_workers", "switch_package"],
}
# the rollback stages where they are not named like the forward ones
ROLLBACK_KILL_STAGES = {"CHANGE_VNFPKG": ["change_current_package_start", "switch_package"]}
# releases of the example package a change_vnfpkg moves to: descriptor version -> the next one, its
# vnfdId and Kubernetes version (one minor up each)
RELEASES = {"1.0": ("1.1", "5f2a9c1e-7b3d-4e8a-9c6f-000000000011", "1.31.2"),
            "1.1": ("1.2", "5f2a9c1e-7b3d-4e8a-9c6f-000000000012", "1.32.1"),
            "1.2": ("1.3", "5f2a9c1e-7b3d-4e8a-9c6f-000000000013", "1.33.0")}
ENV = {"VNFM_ORPHAN_AFTER": "1", "VNFM_PROBE_CALLBACKS": "0", "VNFM_FAULT_INJECTION": "1", "VNFM_SIM_BOOT_TIME": "0.2",
       "VNFM_SIM_STEP_TIME": "0.01", "VNFM_SIM_NODE_STEP_TIME": "0.01"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One `vnfm server` process (restartable) on a fixed port."""

    def __init__(self, data: Path, database_url: str | None) -> None:
        self.data, self.port = data, _port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, VNFM_DATA_DIR=str(data), VNFM_PORT=str(self.port), **ENV)
        if database_url:
            self.env["VNFM_DATABASE_URL"] = database_url
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = data / f"server-{self.port}.log"
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - kept for the process' life

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "vnfm.entrypoints.cli.main", "server"], env=self.env,
                                     stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}{LCM}/api_versions", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"server on port {self.port} exited with {self.proc.returncode}")
            time.sleep(0.05)
        raise TimeoutError("server did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


@dataclass
class Stats:
    rounds: int = 0
    kills: int = 0
    kills_by_point: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    lost_202: int = 0
    pauses: int = 0
    takeovers: int = 0  # pauses after which the other server took the occurrence over
    zombie_inflight: int = 0  # the step in flight at the pause, completed after the resume
    zombie_actions: int = 0  # further progress lines (a step done) logged by a resumed, fenced owner
    zombie_refusals: int = 0  # side effects it was refused (fencing to the edge)
    not_taken_over: int = 0  # pauses the other server did not take over within TAKEOVER_BOUND
    takeover_max: float = 0.0  # the longest SIGSTOP -> FAILED_TEMP seen (seconds)
    cancels: Counter[str] = field(default_factory=Counter)  # cancels sent to the other server during a pause
    cancel_max: float = 0.0  # the longest answer to one (seconds)
    operations: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    rollbacks: int = 0
    violations: list[str] = field(default_factory=list)


TAKEOVER_BOUND = 20.0  # orphan_after (1 s) + the database's idle-in-transaction timeout (10 s) + slack
CANCEL_BOUND = 10.0  # the lock timeout (5 s) + slack: a cancel must be answered, never hang
NOT_ACTIONS = ("stopped", "not written", "taken over", "not recording", "failed in", "cancelled in")


def _zombie_lines(log: Path, offset: int, op_id: str) -> tuple[list[str], int]:
    """The resumed owner's log since `offset` about `op_id`: progress lines (`op <id8> <stage>:
    <message>`, each reporting a step it carried out) and the number of side effects refused."""
    with open(log, "rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
    acted, refused = [], 0
    for line in text.splitlines():
        if "not acting on it" in line and op_id in line:
            refused += 1
        elif f" op {op_id[:8]} " in f" {line} " and ": " in line and not any(w in line for w in NOT_ACTIONS):
            acted.append(line[-160:])
    return acted, refused


def _sessions(url: str | None, op_id: str) -> str:
    """The database's sessions (state, wait, age of the transaction, query) and the occurrence's
    owner / heartbeat, on PostgreSQL: why a paused owner's occurrence is not taken over."""
    if not url or not url.startswith("postgres"):
        return "(not PostgreSQL)"
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT pid, state, wait_event_type, wait_event, now() - xact_start, left(query, 90) "
                "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND state <> 'idle'")).all()
            occ = conn.execute(text("SELECT owner, heartbeat, now() - heartbeat, operation_state, epoch "
                                    "FROM vnf_lcm_op_occs WHERE id = :i"), {"i": op_id}).first()
        return f"{[tuple(map(str, r)) for r in rows]}; row {tuple(map(str, occ or ()))}"
    except Exception as exc:  # a diagnosis, never the campaign's failure
        return f"(diagnosis failed: {exc!r})"
    finally:
        engine.dispose()


class Campaign:
    def __init__(self, servers: list[Server], rng: random.Random, stats: Stats, pause_share: float = 0.15,
                 upgrade_share: float = 0.0) -> None:
        self.servers, self.rng, self.stats = servers, rng, stats
        self.pause_share = pause_share
        self.upgrade_share = upgrade_share  # rounds that upgrade an upgradable cluster (beyond the mix)
        self.vnfd_id = ""

    # ------------------------------------------------------------------ plumbing
    def client(self, server: Server | None = None) -> httpx.Client:
        return httpx.Client(base_url=(server or self.servers[0]).url, timeout=30)

    def onboard(self) -> None:
        with self.client() as c:
            pkg = c.post("/vnfpkgm/v1/vnf_packages", json={}).json()
            r = c.put(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}/package_content", content=example_csar(),
                      headers={"Content-Type": "application/zip"})
            r.raise_for_status()
            self.vnfd_id = c.get(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}").json()["vnfdId"]
            for version, vnfd_id, _ in RELEASES.values():  # the releases a change_vnfpkg moves to
                pkg = c.post("/vnfpkgm/v1/vnf_packages", json={}).json()
                c.put(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}/package_content",
                      content=example_csar_version(version, vnfd_id),
                      headers={"Content-Type": "application/zip"}).raise_for_status()

    def instances(self) -> list[dict[str, Any]]:
        with self.client() as c:
            return list(c.get(f"{LCM}/vnf_instances", params={"all_fields": ""}).json())

    def ops_of(self, c: httpx.Client, inst_id: str) -> list[dict[str, Any]]:
        return list(c.get(f"{LCM}/vnf_lcm_op_occs", params={"filter": f"(eq,vnfInstanceId,{inst_id})"}).json())

    # ------------------------------------------------------------------ one round
    def choose(self) -> tuple[str, str, dict[str, Any]]:
        """(instance id, task, body) of this round's request."""
        live = [i for i in self.instances() if i["instantiationState"] == "INSTANTIATED"]
        if len(live) < 2 and (not live or self.rng.random() < 0.5):
            with self.client() as c:
                inst = c.post(f"{LCM}/vnf_instances", json={"vnfdId": self.vnfd_id}).json()
            flavour = self.rng.choice(["simple", "simple", "ha"])
            return inst["id"], "instantiate", instantiate_request(flavour)
        inst = self.rng.choice(live)
        info = inst["instantiatedVnfInfo"]
        level = next((s["scaleLevel"] for s in info.get("scaleStatus", []) if s["aspectId"] == "worker_instance"), 0)
        vnfcs = info.get("vnfcResourceInfo", [])
        workers = [v["id"] for v in vnfcs if v["vduId"] == "workerNode"]
        masters = [v["id"] for v in vnfcs if v["vduId"] == "masterNode"]
        # one master: only the entire VNF can be healed (a master heal would lose etcd quorum)
        master_heal = {"vnfcInstanceId": [self.rng.choice(masters)]} if len(masters) > 1 else {}
        choices: list[tuple[str, dict[str, Any]]] = [("heal", master_heal)]
        if level < 3:
            choices += [("scale", {"type": "SCALE_OUT", "aspectId": "worker_instance"})] * 3
        if level > 0:
            choices += [("scale", {"type": "SCALE_IN", "aspectId": "worker_instance"})] * 2
        if workers:
            choices += [("heal", {"vnfcInstanceId": [self.rng.choice(workers)]})] * 2
        if inst.get("vnfdVersion") in RELEASES:
            _, vnfd_id, k8s = RELEASES[inst["vnfdVersion"]]
            upgrade = ("change_vnfpkg", {"vnfdId": vnfd_id, "additionalParams": {
                "k8s_cluster_installation_param": {"kubernetes_version": k8s}}})
            if self.rng.random() < self.upgrade_share:
                return inst["id"], upgrade[0], upgrade[1]
            choices += [upgrade] * 2
        if self.rng.random() < 0.15:
            choices = [("terminate", {"terminationType": "FORCEFUL"})]
        task, body = self.rng.choice(choices)
        return inst["id"], task, body

    def inject_fault(self, task: str) -> None:
        roll = self.rng.random()
        if roll > 0.2:
            return
        fault: dict[str, Any]
        if task in ("instantiate", "scale", "heal") and roll < 0.08:
            fault = {"fail_build": {"workerNode": 1}}
        elif task in ("instantiate", "scale") and roll < 0.14:
            fault = {"unreachable_next": {"workerNode": 1}}
        else:
            fault = {"fail_delete": 1}
        with self.client() as c:
            c.post("/sim/v1/faults", json=fault).raise_for_status()
        self.stats.faults[next(iter(fault))] += 1

    def clear_faults(self) -> None:
        with self.client() as c:  # pending faults dropped, every VM answers again
            c.delete("/sim/v1/faults")

    def run_round(self) -> None:
        inst_id, task, body = self.choose()
        op_name = task.upper()
        self.stats.operations[op_name if task != "scale" else body["type"]] += 1
        self.inject_fault(task)
        target = self.rng.choice(self.servers)
        kill_at = self.kill_point(op_name)
        op_id = self.send(target, inst_id, task, body, kill_at)
        if op_id is None:
            return
        self.resolve(op_id, op_name, body)

    def kill_point(self, op_name: str) -> str | None:
        roll = self.rng.random()
        if roll < 0.15:
            return None
        if len(self.servers) > 1 and roll < 0.15 + self.pause_share:  # SIGSTOP past the takeover, SIGCONT
            return f"pause:{self.rng.choice(KILL_STAGES[op_name])}"
        if roll < 0.55:
            return f"stage:{self.rng.choice(KILL_STAGES[op_name])}"
        return f"time:{self.rng.uniform(0.0, 1.5):.3f}"

    def send(self, target: Server, inst_id: str, task: str, body: dict[str, Any], kill_at: str | None) -> str | None:
        """POST the task to `target`, killing it at `kill_at`; the occurrence id (None: not accepted)."""
        with self.client(target) as c:
            known = {o["id"] for o in self.ops_of(c, inst_id)}
        killer = Killer(self, target, kill_at) if kill_at else None
        if killer and kill_at and kill_at.startswith("time:"):
            killer.start(None)
        try:
            with self.client(target) as c:
                r = c.post(f"{LCM}/vnf_instances/{inst_id}/{task}", json=body)
            if r.status_code != 202:
                if killer:
                    killer.cancel()
                if r.status_code == 409:  # nothing runs on the instance: a lock was left behind
                    raise RuntimeError(f"{task} answered 409: {r.text[:300]}")
                self.stats.outcomes[f"{task} refused {r.status_code}"] += 1
                return None
            op_id = r.headers["Location"].rsplit("/", 1)[-1]
        except httpx.TransportError:
            self.stats.lost_202 += 1
            if killer:
                killer.join()
            op_id = self.find_accepted(inst_id, task.upper(), known)
            if op_id is None:
                self.stats.outcomes[f"{task} not accepted (connection lost)"] += 1
            return op_id
        if killer:
            if kill_at and not kill_at.startswith("time:"):
                killer.start(op_id)
            killer.join()
        return op_id

    def find_accepted(self, inst_id: str, operation: str, known: set[str]) -> str | None:
        for srv in self.servers:
            if srv.proc is None or srv.proc.poll() is not None:
                srv.start()
        with self.client() as c:
            new = [o for o in self.ops_of(c, inst_id) if o["id"] not in known and o["operation"] == operation]
        return str(new[-1]["id"]) if new else None

    # ------------------------------------------------------------------ resolving an occurrence
    def settled(self, op_id: str, timeout: float = 120) -> dict[str, Any]:
        """The occurrence once it is final or FAILED_TEMP (asking any server that answers)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for srv in self.servers:
                try:
                    with self.client(srv) as c:
                        occ = c.get(f"{LCM}/vnf_lcm_op_occs/{op_id}").json()
                except httpx.TransportError:
                    continue
                if occ["operationState"] in FINAL | {"FAILED_TEMP"}:
                    return dict(occ)
                break
            time.sleep(0.05)
        raise TimeoutError(f"occurrence {op_id} did not settle in {timeout:g}s")

    def resolve(self, op_id: str, op_name: str, body: dict[str, Any]) -> None:
        """Retry or roll back (with more kills) until the occurrence is final."""
        errors: list[str] = []  # why each attempt stopped FAILED_TEMP, said when it never converges
        action, inst_id = "request", ""
        for attempt in range(10):
            occ = self.settled(op_id)
            state, inst_id = occ["operationState"], occ["vnfInstanceId"]
            if state in FINAL:
                self.finish(occ, attempt)
                return
            errors.append(f"{action}: {str((occ.get('error') or {}).get('detail', '?'))[:400]}")
            self.clear_faults()
            rollback_ok = op_name in ("INSTANTIATE", "SCALE", "CHANGE_VNFPKG") and attempt < 6
            action = "rollback" if rollback_ok and self.rng.random() < 0.5 else "retry"
            target = self.rng.choice(self.servers)
            with self.client(target) as c:
                r = c.post(f"{LCM}/vnf_lcm_op_occs/{op_id}/{action}")
                if r.status_code == 409 and action == "rollback":
                    action = "retry"
                    r = c.post(f"{LCM}/vnf_lcm_op_occs/{op_id}/retry")
                elif r.status_code == 409 and action == "retry":  # its rollback has started: no retry
                    action = "rollback"
                    r = c.post(f"{LCM}/vnf_lcm_op_occs/{op_id}/rollback")
            if r.status_code != 202:
                self.stats.violations.append(f"{action} of {op_id[:8]} answered {r.status_code}: {r.text[:200]}")
                return
            self.stats.retries += action == "retry"
            self.stats.rollbacks += action == "rollback"
            if self.rng.random() < 0.3:
                stages = ROLLBACK_KILL_STAGES.get(op_name, KILL_STAGES[op_name]) if action == "rollback" \
                    else KILL_STAGES[op_name]
                killer = Killer(self, target, f"stage:{self.rng.choice(stages)}", rollback=action)
                killer.start(op_id)
                killer.join()
        with self.client() as c:
            c.post(f"{LCM}/vnf_lcm_op_occs/{op_id}/fail")
        self.stats.violations.append(f"{op_name} {op_id[:8]} did not converge in 10 attempts; the attempts "
                                     f"stopped with: {' | '.join(errors)}; at the end: {self.cluster_of(inst_id)}")

    def cluster_of(self, inst_id: str) -> str:
        """What the instance records (vnfdId, Kubernetes version) and its nodes' kubelet versions,
        for a round that did not converge."""
        try:
            with self.client() as c:
                inst = c.get(f"{LCM}/vnf_instances/{inst_id}").json()
                k8s = c.get(f"/sim/v1/state/{inst_id}").json().get("kubernetes") or {}
        except (httpx.HTTPError, ValueError) as e:
            return f"(not read: {e})"
        params = ((inst.get("instantiatedVnfInfo") or {}).get("additionalParams") or {})
        version = (params.get("k8s_cluster_installation_param") or {}).get("kubernetes_version")
        nodes = ", ".join(f"{n['name']} {n.get('version')}{'' if n['ready'] else ' NotReady'}"
                          f"{' cordoned' if n['cordoned'] else ''}" for n in k8s.get("nodes", []))
        return f"instance vnfdId {inst.get('vnfdId')} Kubernetes {version}; nodes: {nodes}"

    def finish(self, occ: dict[str, Any], attempts: int) -> None:
        state, op = occ["operationState"], occ["operation"]
        self.stats.outcomes[f"{op} {state}" + (" after retry/rollback" if attempts else "")] += 1
        if state == "FAILED":
            self.stats.violations.append(f"{op} {occ['id'][:8]} ended FAILED")
        gone = (op == "INSTANTIATE" and state == "ROLLED_BACK") or (op == "TERMINATE" and state == "COMPLETED")
        if gone:
            with self.client() as c:
                r = c.delete(f"{LCM}/vnf_instances/{occ['vnfInstanceId']}")
                if r.status_code != 204:
                    self.stats.violations.append(f"delete of {occ['vnfInstanceId'][:8]} answered {r.status_code}")


class Killer:
    """SIGKILLs `target` at a point ("time:<s>" after start, or "stage:<name>" once the occurrence's
    progress log is in that stage, or its rollback stage), then restarts it."""

    def __init__(self, campaign: Campaign, target: Server, point: str, rollback: str = "") -> None:
        self.campaign, self.target, self.point = campaign, target, point
        if rollback == "rollback" and point.startswith("stage:"):
            self.point = f"stage:rollback:{point.split(':', 1)[1]}"
        self.thread: threading.Thread | None = None
        self._cancel = threading.Event()

    def start(self, op_id: str | None) -> None:
        self.thread = threading.Thread(target=self._run, args=(op_id,), daemon=True)
        self.thread.start()

    def cancel(self) -> None:
        self._cancel.set()
        self.join()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()

    def _run(self, op_id: str | None) -> None:
        kind, _, arg = self.point.partition(":")
        if kind == "pause":
            if op_id is not None and self._reached(op_id, arg):
                self._pause(op_id)
            return
        if kind == "time":
            if self._cancel.wait(float(arg)):
                return
        elif op_id is None or not self._reached(op_id, arg):
            return
        self.target.kill()
        stats = self.campaign.stats
        stats.kills += 1
        stats.kills_by_point[self.point if kind == "stage" else "random time"] += 1
        self.target.start()

    def _pause(self, op_id: str) -> None:
        """SIGSTOP the runner until another server took the occurrence over (FAILED_TEMP), SIGCONT
        it, and check that the resumed runner changed nothing (fencing)."""
        assert self.target.proc is not None
        other = next(s for s in self.campaign.servers if s is not self.target)
        stats = self.campaign.stats
        self.target.proc.send_signal(signal.SIGSTOP)
        paused = time.monotonic()
        stats.pauses += 1
        self.target.log.flush()
        resumed_at = self.target.log_path.stat().st_size
        self.diagnosis = ""
        try:
            with self.campaign.client(other) as c:
                if self.campaign.rng.random() < 0.5:  # the paused owner may hold the row's locks
                    self._cancel_paused(c, op_id)
                deadline = paused + TAKEOVER_BOUND
                while time.monotonic() < deadline:
                    taken = c.get(f"{LCM}/vnf_lcm_op_occs/{op_id}").json()
                    if taken["operationState"] in FINAL | {"FAILED_TEMP"}:
                        break
                    time.sleep(0.05)
                else:  # what holds it (still paused): the sessions and the row, for the report
                    self.diagnosis = _sessions(self.target.env.get("VNFM_DATABASE_URL"), op_id)
        finally:
            self.target.proc.send_signal(signal.SIGCONT)
        if taken["operationState"] not in FINAL | {"FAILED_TEMP"}:
            stats.not_taken_over += 1
            stats.violations.append(f"paused owner's {op_id[:8]} not taken over within {TAKEOVER_BOUND:g} s; "
                                    f"database sessions then: {self.diagnosis}")
        if taken["operationState"] != "FAILED_TEMP":
            return
        stats.takeover_max = max(stats.takeover_max, time.monotonic() - paused)
        stats.takeovers += 1
        time.sleep(1.5)  # the resumed runner's next writes (refused) happen now
        with self.campaign.client(other) as c:
            after = c.get(f"{LCM}/vnf_lcm_op_occs/{op_id}").json()
        acted, refused = _zombie_lines(self.target.log_path, resumed_at, op_id)
        # The step in flight when the process was paused completes (its line comes first); any
        # further step of the resumed owner is a violation.
        stats.zombie_inflight += min(1, len(acted))
        acted = acted[1:]
        stats.zombie_actions += len(acted)
        stats.zombie_refusals += refused
        if acted:
            stats.violations.append(f"paused owner of {op_id[:8]} acted after the takeover: {acted[:3]}")
        if (after["operationState"], after.get("error")) != (taken["operationState"], taken.get("error")):
            stats.violations.append(f"paused owner changed {op_id[:8]} after the takeover: "
                                    f"{taken['operationState']} -> {after['operationState']}")

    def _cancel_paused(self, c: httpx.Client, op_id: str) -> None:
        """A cancel through the other server while the owner is paused: answered (202, 409 or a
        503 when the row stays locked) within CANCEL_BOUND, never hanging."""
        stats = self.campaign.stats
        t0 = time.monotonic()
        try:
            r = c.post(f"{LCM}/vnf_lcm_op_occs/{op_id}/cancel", json={"cancelMode": "GRACEFUL"},
                       timeout=CANCEL_BOUND * 3)
            stats.cancels[str(r.status_code)] += 1
        except httpx.TimeoutException:
            stats.cancels["timeout"] += 1
        took = time.monotonic() - t0
        stats.cancel_max = max(stats.cancel_max, took)
        if took > CANCEL_BOUND:
            stats.violations.append(f"cancel of {op_id[:8]} (owner paused) took {took:.1f} s")

    def _reached(self, op_id: str, stage: str) -> bool:
        deadline = time.monotonic() + 60
        with self.campaign.client(self.target) as c:
            while time.monotonic() < deadline and not self._cancel.is_set():
                try:
                    occ = c.get(f"{LCM}/vnf_lcm_op_occs/{op_id}").json()
                except httpx.TransportError:
                    return False
                events = occ.get("vnfmProgress") or []
                if events and events[-1].get("stage") == stage:
                    return True
                if occ["operationState"] in FINAL | {"FAILED_TEMP"}:
                    return False
                time.sleep(0.005)
        return False


# ====================================================================== main
def run(args: argparse.Namespace) -> Stats:
    stats = Stats()
    data = Path(args.data or tempfile.mkdtemp(prefix="vnfm-chaos-"))
    data.mkdir(parents=True, exist_ok=True)
    pg = None
    url = args.database_url
    if args.postgres and not url:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests.unit.db.pgcluster import start_cluster

        pg, reason = start_cluster()
        if pg is None:
            raise SystemExit(f"--postgres: {reason}")
        url = pg.create_database("vnfm_chaos")
    servers = [Server(data, url) for _ in range(args.servers)]
    try:
        for s in servers:
            s.start()
        campaign = Campaign(servers, random.Random(args.seed), stats, args.pause_share, args.upgrade_share)
        campaign.onboard()
        deadline = time.monotonic() + args.max_seconds
        shown = 0
        while stats.rounds < args.rounds and time.monotonic() < deadline:
            stats.rounds += 1
            try:
                campaign.run_round()
            except (RuntimeError, TimeoutError) as exc:
                stats.violations.append(f"round {stats.rounds}: {exc}")
            with campaign.client() as c:
                stats.violations += [f"round {stats.rounds}: {p}" for p in check(c)]
            if not args.json:
                print(f"round {stats.rounds}: kills {stats.kills}, violations {len(stats.violations)}", flush=True)
                for v in stats.violations[shown:]:
                    print(f"  VIOLATION {v}", flush=True)
            shown = len(stats.violations)
    finally:
        for s in servers:
            s.stop()
        if pg is not None:
            pg.stop()
    return stats


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--servers", type=int, default=1, choices=(1, 2))
    p.add_argument("--database-url", default=None, help="a shared database (default: SQLite in the data dir)")
    p.add_argument("--postgres", action="store_true", help="start a throwaway PostgreSQL (needs its binaries)")
    p.add_argument("--data", default=None, help="data dir (default: a new temporary one)")
    p.add_argument("--max-seconds", type=float, default=3600.0, help="stop starting rounds after this")
    p.add_argument("--pause-share", type=float, default=0.15,
                   help="with two servers: share of the rounds that SIGSTOP the runner instead of killing it")
    p.add_argument("--upgrade-share", type=float, default=0.0,
                   help="share of the rounds on an upgradable cluster that are a change_vnfpkg (besides the mix)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args()
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    started = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the servers on the way out
    stats = run(args)
    figures = {"seed": args.seed, "servers": args.servers, "database": "postgresql" if (args.postgres or
               args.database_url) else "sqlite", "rounds": stats.rounds, "kills": stats.kills,
               "kills_by_point": dict(stats.kills_by_point), "faults": dict(stats.faults),
               "lost_202": stats.lost_202, "pauses": stats.pauses, "takeovers": stats.takeovers,
               "zombie_inflight": stats.zombie_inflight, "zombie_actions": stats.zombie_actions,
               "zombie_refusals": stats.zombie_refusals, "not_taken_over": stats.not_taken_over,
               "takeover_max_s": round(stats.takeover_max, 2), "cancels": dict(stats.cancels),
               "cancel_max_s": round(stats.cancel_max, 2),
               "operations": dict(stats.operations), "outcomes": dict(stats.outcomes),
               "retries": stats.retries, "rollbacks": stats.rollbacks, "violations": stats.violations,
               "seconds": round(time.monotonic() - started, 1)}
    print(json.dumps(figures, indent=None if args.json else 2))
    sys.exit(1 if stats.violations else 0)


if __name__ == "__main__":
    main()
