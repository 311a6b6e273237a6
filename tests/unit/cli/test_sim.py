"""`vnfm sim state`: the cloud's sections against the fake server, and the Kubernetes twin's
cluster as tables against the real server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.unit.cli.cli_fake import SEED_REQUEST, FakeVnfm, new_vnf, request_file, run
from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.demo import HaDemo
from vnfm.entrypoints.cli.main import cli
from vnfm.examples import example_csar


def test_sim_state_renders_sections(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    res = run(fake, "sim", "state")
    assert res.exit_code == 0
    assert "servers:" in res.stdout and "volumes:" in res.stdout
    assert res.stdout.count("ACTIVE") == 3
    res = run(fake, "sim", "state", vnf_id, "--json")
    assert len(json.loads(res.stdout)["servers"]) == 3


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


def test_sim_state_lists_what_was_created_through_the_cluster_api() -> None:
    from vnfm.entrypoints.cli.render import render_cluster

    k8s = {"nodes": [], "etcd": {}, "haproxy": [], "vim": None, "api": {
        "deployments": {"default/vdu1-simple": {"replicas": 2, "ready": 1}},
        "services": {"default/nginx-service": {"type": "NodePort", "node_ports": [30422, 31000]}},
        "pods": {"default/vdu1-simple-abc": {"node": "workernode-0", "node_ready": True}}}}
    text = render_cluster(k8s)
    assert "Created through the cluster's API" in text
    assert "default/vdu1-simple" in text and "1/2 ready" in text
    assert "NodePort 30422,31000" in text and "on workernode-0" in text
