"""Seed 002's "Configuration of Load Balancer" with the stock client: a Kubespray cluster on the
simulated cloud, then Tacker's CNF-NodePort sample instantiated on the Kubernetes VIM the cluster
registered, with `simple_cnf_param_file.json` as the seed writes it; scale, heal a VNFC, heal
entire, terminate; the cluster VNF's state view shows the CNF's objects and LB frontends."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import tacker_sample_csar
from tests.unit.kubernetes.test_cnf import KUBESPRAY, cnf_body

from .conftest import Cli

pytestmark = pytest.mark.slow


def _upload(cli: Cli, tmp: Path, name: str) -> str:
    path = tmp / f"{name}.zip"
    path.write_bytes(tacker_sample_csar(name))
    pkg = cli.json("vnf", "package", "create")["ID"]
    cli.run("vnf", "package", "upload", "--path", str(path), pkg)
    return str(cli.json("vnf", "package", "show", pkg)["VNFD ID"])


def _run(cli: Cli, inst_id: str, *args: str) -> dict[str, Any]:
    before = set(cli.ops_of(inst_id))
    out = cli.run("vnflcm", *args).stdout
    assert "accepted" in out.lower(), out
    return cli.wait_new_op(inst_id, before, timeout=60)


def _state(cli: Cli, inst_id: str) -> dict[str, Any]:
    r = cli.http.get(f"/sim/v1/state/{inst_id}")
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_cnf_nodeport_lifecycle_with_the_stock_client(cli: Cli, tmp_path: Path) -> None:
    cluster_vnfd, cnf_vnfd = _upload(cli, tmp_path, "kubespray"), _upload(cli, tmp_path, "cnf_nodeport")
    cluster = cli.json("vnflcm", "create", cluster_vnfd)["ID"]
    params = tmp_path / "simple_kubernetes_param_file.json"
    params.write_text(json.dumps({"flavourId": "simple", "additionalParams": copy.deepcopy(KUBESPRAY)}))
    _run(cli, cluster, "instantiate", cluster, str(params))
    shown = cli.json("vnflcm", "show", cluster)
    vim_id = next(c["vimId"] for c in shown["VIM Connection Info"] if c["vimType"] == "kubernetes")
    lb_ip = _state(cli, cluster)["external_lb"]["address"]
    before = _state(cli, cluster)["external_lb"]["frontends"]

    cnf = cli.json("vnflcm", "create", cnf_vnfd)["ID"]
    cnf_file = tmp_path / "simple_cnf_param_file.json"
    cnf_file.write_text(json.dumps(cnf_body(vim_id, lb_ip), indent=4))
    _run(cli, cnf, "instantiate", cnf, str(cnf_file))
    show = cli.json("vnflcm", "show", cnf)
    info = show["Instantiated Vnf Info"]
    [vnfc] = info["vnfcResourceInfo"]
    assert vnfc["vduId"] == "VDU1" and vnfc["computeResource"]["vimLevelResourceType"] == "Deployment"
    assert vnfc["computeResource"]["resourceId"].startswith("vdu1-simple-")
    assert [c["vimType"] for c in show["VIM Connection Info"]] == ["kubernetes"]
    state = _state(cli, cluster)
    services = state["kubernetes"]["api"]["services"]
    random_port = services["default/nginx-service"]["node_ports"][0]
    assert set(state["external_lb"]["frontends"]) == {*before, "30422", str(random_port)}

    _run(cli, cnf, "scale", "--type", "SCALE_OUT", "--aspect-id", "vdu1_aspect", cnf)
    assert len(cli.json("vnflcm", "show", cnf)["Instantiated Vnf Info"]["vnfcResourceInfo"]) == 2
    _run(cli, cnf, "scale", "--type", "SCALE_IN", "--aspect-id", "vdu1_aspect", cnf)
    [now] = cli.json("vnflcm", "show", cnf)["Instantiated Vnf Info"]["vnfcResourceInfo"]
    _run(cli, cnf, "heal", cnf, "--vnfc-instance", now["id"])
    [healed] = cli.json("vnflcm", "show", cnf)["Instantiated Vnf Info"]["vnfcResourceInfo"]
    assert healed["id"] == now["id"]
    assert healed["computeResource"]["resourceId"] != now["computeResource"]["resourceId"]
    _run(cli, cnf, "heal", cnf)
    state = _state(cli, cluster)
    new_port = state["kubernetes"]["api"]["services"]["default/nginx-service"]["node_ports"][0]
    assert set(state["external_lb"]["frontends"]) == {*before, "30422", str(new_port)}

    _run(cli, cnf, "terminate", cnf)
    assert _state(cli, cluster)["external_lb"]["frontends"] == before
    cli.run("vnflcm", "delete", cnf)
