"""`vnfm demo --scenario kubespray` (demo/kubespray.py): seed 002 end to end in this process, and a
check that fails."""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner

from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.main import cli


def test_demo_kubespray_scenario_end_to_end() -> None:
    res = CliRunner().invoke(cli, ["demo", "--scenario", "kubespray", "--timeout", "120"])
    out = res.output
    assert res.exit_code == 0, out
    assert "Demo succeeded: 12 steps" in out
    for name in ("scale out by 1 with whole-dict overrides (another Ansible server)",
                 "heal the single master: refused", "terminate (inventories removed)"):
        assert re.search(rf"\[OK\] {re.escape(name)} ", out), name
    assert "playbook runs: cluster.yml, facts.yml, scale.yml --limit workernode-2\n" in out
    assert "inventory on 10.10.0.23:" in out  # the override's Ansible server got the inventory
    assert re.search(r"external LB [0-9.]+: \*:8383 -> [0-9.]+:6443; NodePort pool of 5 node\(s\)", out)
    assert "refused: 422" in out and "heal the entire VNF instead" in out
    assert "Ansible servers' inventories: {'10.10.0.23': [], '10.10.0.50': []}" in out
    assert "password1" not in out and "password2" not in out


def test_demo_kubespray_fails_when_the_lb_misses_a_node(monkeypatch: pytest.MonkeyPatch) -> None:
    real = VnfmClient.sim_state
    scaled = {"n": 0}
    real_scale = VnfmClient.scale

    def scale(self: VnfmClient, vnf_id: str, body: dict[str, Any]) -> str:
        scaled["n"] += 1
        return real_scale(self, vnf_id, body)

    def sim_state(self: VnfmClient, vnf_id: str | None = None) -> Any:
        snap = real(self, vnf_id)
        if scaled["n"] and isinstance(snap, dict) and snap.get("external_lb"):
            snap["external_lb"]["pools"]["nodeport"] = snap["external_lb"]["pools"]["nodeport"][:-1]
        return snap

    monkeypatch.setattr(VnfmClient, "scale", scale)
    monkeypatch.setattr(VnfmClient, "sim_state", sim_state)
    res = CliRunner().invoke(cli, ["demo", "--scenario", "kubespray", "--timeout", "60"])
    assert res.exit_code == 1, res.output
    assert "Demo FAILED at 'scale out worker_instance by 1'" in res.output
    assert "the LB pool 3 node(s); the instance has 3 worker VNFC(s)" in res.output
