"""A short, bounded run of the fault-injection campaign (bench/chaos.py): SIGKILLs of a real server
process at random points and inside hooks, retry / rollback, invariants checked against the
simulated cloud. Deselect with `-m "not chaos"`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from chaos_invariants import _cloud_matches  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.chaos]


def test_short_campaign_keeps_every_invariant(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "chaos.py"), "--rounds", "4", "--seed", "7",
                          "--max-seconds", "75", "--json", "--data", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=170, check=False)
    assert res.stdout.strip(), res.stderr[-2000:]
    figures = json.loads(res.stdout.strip().splitlines()[-1])
    assert figures["violations"] == [], figures
    assert res.returncode == 0 and figures["rounds"] >= 2 and figures["kills"] >= 1, figures


def _inst(iid: str, vnfcs: list[tuple[str, str]]) -> dict[str, Any]:
    return {"id": iid, "instantiationState": "INSTANTIATED", "instantiatedVnfInfo": {"vnfcResourceInfo": [
        {"id": vid, "vduId": "workerNode", "computeResource": {"resourceId": sid}} for vid, sid in vnfcs]}}


def test_the_invariants_see_orphans_and_mismatches() -> None:
    sim: dict[str, Any] = {
        "deployments": [{"instance_id": "i1", "vnfcs": [
            {"id": "v1", "name": "w-0", "server_id": "s1", "ports": {"cp": "p1"}, "volumes": {}}]}],
        "servers": [{"id": "s1", "name": "w-0"}, {"id": "s9", "name": "w-9"}],
        "ports": [{"id": "p1", "name": "w-0-cp", "vnfc_id": "v1"}, {"id": "p9", "name": "w-9-cp", "vnfc_id": "v9"}],
        "floating_ips": [{"floating_ip_address": "172.24.0.9", "port_id": "p9"}],
        "volumes": [{"id": "vol9", "name": "w-9-vol"}],
    }
    assert _cloud_matches({"i1": _inst("i1", [("v1", "s1")])}, sim) == [
        "orphan server w-9 (s9)", "orphan port w-9-cp (p9)", "orphan floating IP 172.24.0.9",
        "orphan volume w-9-vol (vol9)"]
    problems = _cloud_matches({"i1": _inst("i1", [("v1", "s2"), ("v2", "s3")])}, {**sim, "servers": [sim["servers"][0]],
                                                                                   "ports": sim["ports"][:1],
                                                                                   "floating_ips": [], "volumes": []})
    assert problems == ["instance i1: VNFCs recorded ['v1', 'v2'] but the cloud has ['v1']",
                        "VNFC w-0 of i1: recorded server differs from the cloud's"]
    assert _cloud_matches({}, sim)[0] == "cloud keeps a deployment of i1, which is not instantiated"
