"""The stock python-tackerclient (the `openstack` command, no Keystone) against a running vnfm.

    openstack --os-auth-type none --os-endpoint http://127.0.0.1:PORT vnf package ... / vnflcm ...

The server runs in a thread of this process (start_in_thread, free port); the client runs as a
subprocess, exactly as a user would run it. Request files are shaped like the seeds'.
Each CLI call costs ~1-2 s of start-up, so independent read-only calls run concurrently.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from vnfm.config import Settings
from vnfm.entrypoints.api.server import start_in_thread
from vnfm.examples import example_csar

from .conftest import Cli

pytestmark = pytest.mark.slow

MASTER_PW = "cli-master-pw"

# Seed 002 "simple_kubernetes_param_file.json", minus the parts that name real OpenStack resources
# only (the VIM id is unknown here: it runs on the default simulated VIM).
INSTANTIATE = {
    "flavourId": "simple",
    "vimConnectionInfo": [
        {"id": "daa80cf2-9b73-4806-8176-56cd6fab8cea", "vimId": "c3369b54-e376-4423-bb61-afd255900fea",
         "vimType": "openstack"}
    ],
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "script_path": "Scripts/install_k8s_cluster.sh",
            "vim_name": "kubernetes_vim",
            "master_node": {
                "aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1", "nic_cp_name": "masterNode_CP1",
                "username": "ubuntu", "password": MASTER_PW, "pod_cidr": "192.168.0.0/16",
                "cluster_cidr": "10.199.187.0/24", "cluster_cp_name": "masterNode_CP1",
            },
            "worker_node": {
                "aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2", "nic_cp_name": "workerNode_CP2",
                "username": "ubuntu", "password": "cli-worker-pw",
            },
        },
        "lcm-operation-user-data": "./UserData/k8s_cluster_user_data.py",
        "lcm-operation-user-data-class": "KubernetesClusterUserData",
    },
    "extVirtualLinks": [
        {"id": "35d69de0-bf3b-4690-8724-16e9edb68b19", "resourceId": "1642ac54-642c-407c-9c7d-e94c55ba5d33",
         "extCps": [{"cpdId": "masterNode_CP1", "cpConfig": [{"linkPortId": "35d69de0-bf3b-4690-8724-16e9edb68b19"}]}]},
        {"id": "fb60ddb1-8787-49cd-8439-d379a449b6fa", "resourceId": "1642ac54-642c-407c-9c7d-e94c55ba5d33",
         "extCps": [{"cpdId": "workerNode_CP2", "cpConfig": [{"linkPortId": "fb60ddb1-8787-49cd-8439-d379a449b6fa"}]}]},
    ],
}


def _vnfcs(show: dict[str, Any]) -> list[dict[str, Any]]:
    return list(show["Instantiated Vnf Info"]["vnfcResourceInfo"])


def test_package_and_vnf_lifecycle_with_the_stock_client(cli: Cli, tmp_path: Path) -> None:
    csar = tmp_path / "sample_kubernetes.zip"
    csar.write_bytes(example_csar())
    inst_file = tmp_path / "simple_kubernetes_param_file.json"
    inst_file.write_text(json.dumps(INSTANTIATE, indent=4))

    # ------------------------------------------------------------ vnf package create / upload
    created = cli.json("vnf", "package", "create", "--user-data", "owner=compat")
    pkg_id = created["ID"]
    assert created["Onboarding State"] == "CREATED"
    out = cli.run("vnf", "package", "upload", "--path", str(csar), pkg_id).stdout
    assert "accepted" in out.lower(), out

    listed, shown = cli.many(("vnf", "package", "list"), ("vnf", "package", "show", pkg_id))
    row = next(r for r in listed if r["Id"] == pkg_id)
    assert row["Onboarding State"] == "ONBOARDED" and row["Operational State"] == "ENABLED"
    vnfd_id = shown["VNFD ID"]
    assert vnfd_id and shown["Onboarding State"] == "ONBOARDED"
    assert shown["User Defined Data"] == {"owner": "compat"}

    # ------------------------------------------------------------ vnflcm create / instantiate
    inst = cli.json("vnflcm", "create", vnfd_id, "--name", "compat-k8s")
    inst_id = inst["ID"]
    assert inst["Instantiation State"] == "NOT_INSTANTIATED"
    assert inst["VNF Instance Name"] == "compat-k8s"

    out = cli.run("vnflcm", "instantiate", inst_id, str(inst_file)).stdout
    assert "accepted" in out.lower(), out
    cli.wait_new_op(inst_id, set())

    show, lst = cli.many(("vnflcm", "show", inst_id), ("vnflcm", "list"))
    assert show["Instantiation State"] == "INSTANTIATED"
    info = show["Instantiated Vnf Info"]
    assert info["flavourId"] == "simple" and info["vnfState"] == "STARTED"
    assert sorted(v["vduId"] for v in _vnfcs(show)) == ["masterNode", "workerNode", "workerNode"]
    assert MASTER_PW not in json.dumps(show)
    assert [r["Instantiation State"] for r in lst if r["ID"] == inst_id] == ["INSTANTIATED"]

    # ------------------------------------------------------------ scale out (seed: --number-of-steps 1)
    n = set(cli.ops_of(inst_id))
    out = cli.run("vnflcm", "scale", "--type", "SCALE_OUT", "--aspect-id", "worker_instance",
                  "--number-of-steps", "1", inst_id).stdout
    assert "accepted" in out.lower(), out
    cli.wait_new_op(inst_id, n)
    n = set(cli.ops_of(inst_id))
    cli.run("vnflcm", "scale", "--type", "SCALE_IN", "--aspect-id", "worker_instance", "--number-of-steps", "1",
            inst_id)
    cli.wait_new_op(inst_id, n)

    # ------------------------------------------------------------ heal one VNFC (SOL002), then entire
    show = cli.json("vnflcm", "show", inst_id)
    worker = next(v for v in _vnfcs(show) if v["vduId"] == "workerNode")
    n = set(cli.ops_of(inst_id))
    out = cli.run("vnflcm", "heal", inst_id, "--vnfc-instance", worker["id"]).stdout
    assert "accepted" in out.lower(), out
    healed = cli.wait_new_op(inst_id, n)
    assert healed["operation"] == "HEAL"
    n = set(cli.ops_of(inst_id))
    cli.run("vnflcm", "heal", inst_id)
    cli.wait_new_op(inst_id, n)

    # ------------------------------------------------------------ op list / op show
    ops = cli.json("vnflcm", "op", "list")
    mine = [o for o in ops if o["VNF Instance ID"] == inst_id]
    assert sorted(o["Operation"] for o in mine) == ["HEAL", "HEAL", "INSTANTIATE", "SCALE", "SCALE"]
    assert {o["Operation State"] for o in mine} == {"COMPLETED"}
    heal_op = cli.json("vnflcm", "op", "show", healed["id"])
    assert heal_op["Operation"] == "HEAL" and heal_op["Operation State"] == "COMPLETED"
    assert heal_op["Operation Parameters"]["vnfcInstanceId"] == [worker["id"]]

    # ------------------------------------------------------------ errors come back readable
    bad = cli.run("vnflcm", "instantiate", inst_id, str(inst_file), check=False)
    assert bad.returncode != 0 and "INSTANTIATED" in bad.stderr + bad.stdout, bad
    bad = cli.run("vnf", "package", "delete", pkg_id, check=False)
    assert bad.returncode != 0 and "ENABLED" in bad.stderr + bad.stdout, bad

    # ------------------------------------------------------------ terminate / delete
    n = set(cli.ops_of(inst_id))
    out = cli.run("vnflcm", "terminate", inst_id).stdout
    assert "accepted" in out.lower(), out
    cli.wait_new_op(inst_id, n)
    out = cli.run("vnflcm", "delete", inst_id).stdout
    assert "deleted" in out.lower(), out

    disabled = cli.json("vnf", "package", "update", "--operational-state", "DISABLED", pkg_id)
    assert disabled == {"Operational State": "DISABLED"}
    out = cli.run("vnf", "package", "delete", pkg_id).stdout
    assert "deleted successfully" in out.lower(), out

    # Gone, as the client sees it.
    remaining = cli.many(("vnf", "package", "list"), ("vnflcm", "list"))
    assert all(r["Id"] != pkg_id for r in remaining[0])
    assert all(r["ID"] != inst_id for r in remaining[1])


def test_package_upload_from_a_url_with_the_stock_client(cli: Cli) -> None:
    """`openstack vnf package upload --url ... --user-name ... --password ...` (SOL005 upload_from_uri)."""
    import base64
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    content = example_csar()
    want = "Basic " + base64.b64encode(b"repo:repo-pw").decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            ok = self.headers.get("Authorization") == want
            self.send_response(200 if ok else 401)
            self.send_header("Content-Length", str(len(content) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(content)

    repo = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=repo.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{repo.server_address[1]}/sample_kubernetes.zip"
        pkg_id = cli.json("vnf", "package", "create")["ID"]
        out = cli.run("vnf", "package", "upload", "--url", url, "--user-name", "repo", "--password", "repo-pw",
                      pkg_id).stdout
        assert "accepted" in out.lower(), out
        shown = cli.json("vnf", "package", "show", pkg_id)
        assert shown["Onboarding State"] == "ONBOARDED"
        cli.run("vnf", "package", "update", "--operational-state", "DISABLED", pkg_id)
        cli.run("vnf", "package", "delete", pkg_id)
    finally:
        repo.shutdown()
        repo.server_close()


def test_cancel_a_running_operation_with_the_stock_client(cli: Cli, tmp_path: Path) -> None:
    """`openstack vnflcm op cancel --cancel-mode FORCEFUL` on an instantiation whose VMs take a minute to boot."""
    slow = start_in_thread(Settings(data_dir=tmp_path / "slow", port=0, probe_callbacks=False, sim_boot_time=60,
                                    sim_step_time=0, auth_token=""))
    try:
        other = Cli(cli.exe, slow.url)
        http = other.http
        pkg_id = http.post("/vnfpkgm/v1/vnf_packages", json={}).json()["id"]
        r = http.put(f"/vnfpkgm/v1/vnf_packages/{pkg_id}/package_content", content=example_csar(),
                     headers={"Content-Type": "application/zip"})
        assert r.status_code == 202, r.text
        vnfd_id = http.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}").json()["vnfdId"]
        inst_id = http.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id}).json()["id"]
        r = http.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=INSTANTIATE)
        assert r.status_code == 202, r.text
        op_url = r.headers["Location"]
        deadline = time.monotonic() + 10
        while http.get(op_url).json()["operationState"] != "PROCESSING":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        op_id = op_url.rsplit("/", 1)[-1]

        # The client prints that the cancel was accepted, then fails on its own: its command class
        # (a ShowOne) returns nothing to show ("cannot unpack non-iterable NoneType object").
        done = other.run("vnflcm", "op", "cancel", "--cancel-mode", "FORCEFUL", op_id, check=False)
        assert f"Cancel request for LCM operation {op_id} has been accepted" in done.stdout, done
        deadline = time.monotonic() + 10  # not the minute the VMs would take
        while (op := http.get(op_url).json())["operationState"] == "PROCESSING":
            assert time.monotonic() < deadline, op
            time.sleep(0.05)
        assert op["operationState"] == "FAILED_TEMP" and op["isCancelPending"] is False
        assert "cancelled (FORCEFUL)" in op["error"]["detail"]
        again = other.run("vnflcm", "op", "cancel", op_id, check=False)
        assert again.returncode != 0 and "FAILED_TEMP" in again.stdout + again.stderr
        failed = other.json("vnflcm", "op", "fail", op_id)
        assert failed["Operation State"] == "FAILED"
        other.http.close()
    finally:
        slow.stop()


def test_lcm_subscriptions_with_the_stock_client(cli: Cli, tmp_path: Path) -> None:
    """`openstack vnflcm subsc create / list / show / delete` (SOL003 5.4.18, 5.4.19)."""
    made = []
    for i in range(3):  # three: the server pages lists by two here
        req = tmp_path / f"subsc{i}.json"
        req.write_text(json.dumps({
            "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"],
                       "operationStates": ["COMPLETED", "FAILED_TEMP"]},
            "callbackUri": f"http://127.0.0.1:9/notify/{i}",
            "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "subsc-pw"}},
        }))
        created = cli.json("vnflcm", "subsc", "create", str(req))
        assert created["Callback URI"] == f"http://127.0.0.1:9/notify/{i}"
        assert "subsc-pw" not in json.dumps(created)
        made.append(created["ID"])
    listed, shown = cli.many(("vnflcm", "subsc", "list"), ("vnflcm", "subsc", "show", made[1]))
    assert sorted(r["ID"] for r in listed) == sorted(made)  # all pages
    assert shown["Filter"]["operationStates"] == ["COMPLETED", "FAILED_TEMP"]
    only = cli.json("vnflcm", "subsc", "list", "--filter", "(eq,callbackUri,http://127.0.0.1:9/notify/2)")
    assert [r["ID"] for r in only] == [made[2]]
    out = cli.run("vnflcm", "subsc", "delete", *made).stdout
    assert "deleted successfully" in out, out
    assert cli.json("vnflcm", "subsc", "list") == []
