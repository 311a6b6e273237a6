"""`vnfm demo --scenario ha` (demo/ha.py): the whole scenario in this process, and a check that fails."""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner

from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.main import cli


def test_demo_ha_scenario_end_to_end() -> None:
    res = CliRunner().invoke(cli, ["demo", "--scenario", "ha", "--timeout", "120"])
    out = res.output
    assert res.exit_code == 0, out
    assert "Demo succeeded: 10 steps" in out
    for name in ("instantiate (flavour ha: 3 masters, 2 workers)", "scale out worker_instance by 2",
                 "scale in worker_instance by 1", "heal a worker VNFC", "heal a master VNFC",
                 "heal the entire VNF", "terminate (VIM deregistered)"):
        assert re.search(rf"\[OK\] {re.escape(name)} ", out), name
    # the twin's state after each step: 5, 7, 6 nodes; masters and workers counted from the instance
    assert "vnfcs masterNode=3 workerNode=2" in out and "5/5 nodes Ready" in out
    assert "vnfcs masterNode=3 workerNode=4" in out and "7/7 nodes Ready" in out
    assert "vnfcs masterNode=3 workerNode=3" in out and "6/6 nodes Ready" in out
    # heal master: etcd and every HAProxy printed
    assert "etcd: 3 member(s), all healthy" in out
    lbs = re.findall(r"HAProxy on (masternode-\d): 3 backend\(s\): masternode-0, masternode-1, masternode-2", out)
    assert sorted(lbs) == ["masternode-0", "masternode-1", "masternode-2"]
    # tables were printed at every step
    assert out.count("etcd members (3, healthy):") >= 6
    assert out.count("HAProxy backends per master:") >= 6
    # heal entire keeps the VIM id, rotates the credentials; terminate removes the VIM
    m = re.search(r"VIM id before (\S+), after (\S+): same", out)
    assert m is not None and m.group(1) == m.group(2)
    assert "VIM token: changed" in out
    assert f"VIM {m.group(1)}: gone (404)" in out
    assert '"password": "ubuntu"' not in out


def test_demo_ha_exits_non_zero_when_a_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster state that breaks the invariant (an HAProxy missing a backend after the master heal)
    fails that step and the command exits 1."""
    real = VnfmClient.sim_state
    heals = {"n": 0}
    real_heal = VnfmClient.heal

    def heal(self: VnfmClient, vnf_id: str, body: dict[str, Any]) -> str:
        heals["n"] += 1
        return real_heal(self, vnf_id, body)

    def sim_state(self: VnfmClient, vnf_id: str | None = None) -> Any:
        snap = real(self, vnf_id)
        if heals["n"] >= 2 and isinstance(snap, dict) and snap.get("kubernetes"):
            lb = snap["kubernetes"]["haproxy"][0]
            lb["backends"] = lb["backends"][:2]
            lb["backend_count"] = 2
        return snap

    monkeypatch.setattr(VnfmClient, "sim_state", sim_state)
    monkeypatch.setattr(VnfmClient, "heal", heal)
    res = CliRunner().invoke(cli, ["demo", "--scenario", "ha", "--timeout", "120"])
    assert res.exit_code == 1, res.output
    assert "[OK] heal a worker VNFC" in res.output
    assert "Demo FAILED at 'heal a master VNFC'" in res.output
    assert re.search(r"HAProxy on masternode-\d has backends \['masternode-\d', 'masternode-\d'\]", res.output)
