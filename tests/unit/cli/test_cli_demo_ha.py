"""`vnfm demo --scenario ha` and `vnfm sim state VNF_ID` (the Kubernetes twin's cluster as tables)
against the real API server, started in this process on a free port."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.demo import HaDemo
from vnfm.entrypoints.cli.main import cli
from vnfm.examples import example_csar


def _start(data_dir: Path) -> Any:
    from vnfm.config import Settings
    from vnfm.entrypoints.api.server import start_in_thread

    settings = Settings(
        data_dir=data_dir, database_url=f"sqlite:///{data_dir / 'vnfm.db'}", host="127.0.0.1", port=0
    )
    return start_in_thread(settings)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    handle = _start(tmp_path / "data")
    try:
        yield handle
    finally:
        handle.stop()


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
    assert "VIM credentials (CA digest, token digest): changed" in out
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


def test_demo_rejects_unknown_scenario() -> None:
    res = CliRunner().invoke(cli, ["demo", "--scenario", "nope"])
    assert res.exit_code == 2 and "nope" in res.output


def test_sim_state_shows_the_cluster_as_tables(server: Any) -> None:
    url = str(server.url)
    lines: list[str] = []
    with VnfmClient(url) as client:
        demo = HaDemo(client, lines.append, timeout=60)
        demo.onboard(example_csar())
        demo.create()
        demo.instantiate()
        vnf_id = demo.state.vnf_id
        assert vnf_id is not None
        vim_id = demo.vim_id
    runner = CliRunner()
    res = runner.invoke(cli, ["--endpoint", url, "sim", "state", vnf_id])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "servers:" in out  # the cloud's part is still shown
    assert "Nodes (5/5 Ready):" in out
    for n in ("masternode-0", "masternode-1", "masternode-2"):
        assert re.search(rf"^{n}\s+master\s+Ready\s+false", out, re.M), n
    assert len(re.findall(r"^workernode-\d\s+worker\s+Ready", out, re.M)) == 2
    assert "etcd members (3, healthy):" in out
    assert len(re.findall(r"^masternode-\d\s+https://[\d.]+:2380\s+true$", out, re.M)) == 3
    lb_rows = re.findall(r"^(masternode-\d)\s+[\d.]+\s+8383\s+3\s+(.*)$", out, re.M)
    assert sorted(r[0] for r in lb_rows) == ["masternode-0", "masternode-1", "masternode-2"]
    assert all(r[1].count(":6443") == 3 for r in lb_rows)
    assert f"id          {vim_id}" in out or re.search(rf"^id\s+{vim_id}$", out, re.M)

    raw = runner.invoke(cli, ["--endpoint", url, "--show-secrets", "sim", "state", vnf_id, "--json"])
    assert raw.exit_code == 0, raw.output
    k8s = json.loads(raw.output)["kubernetes"]
    assert k8s["etcd"] == {"member_count": 3, "healthy": True, "members": k8s["etcd"]["members"]}
    assert [lb["backend_count"] for lb in k8s["haproxy"]] == [3, 3, 3]
    assert set(k8s["vim"]) == {"id", "name", "endpoint", "ca_sha256", "auth_digest"}
    assert k8s["vim"]["id"] == vim_id
    # no secret of the cluster or of the request anywhere in the API's answer
    app = server.server.config.app.state.vnfm
    vim = app.vims.get(vim_id)
    token = vim.access_info["bearer_token"]
    assert token and token not in raw.output
    assert vim.access_info["ssl_ca_cert"] not in raw.output
    assert "password" not in raw.output and "bearer" not in raw.output.lower()


def test_sim_state_without_a_cluster_has_no_kubernetes_section(server: Any) -> None:
    res = CliRunner().invoke(cli, ["--endpoint", str(server.url), "sim", "state", "no-such-instance", "--json"])
    assert res.exit_code == 0, res.output
    assert "kubernetes" not in json.loads(res.output)
