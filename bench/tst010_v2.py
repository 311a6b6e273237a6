"""Resources for running the ETSI NFV-TST 010 SOL003 VNF LCM Robot suites against /vnflcm/v2.

Not a test and not run in CI (the suites are not in this repository: docs/tst010-v2.md says
where they come from). Two commands, against a running embedded server
(`vnfm server --fault-injection`, simulated cloud, no authentication):

    .venv/bin/python bench/tst010_v2.py prepare --endpoint http://127.0.0.1:9890 [--suite DIR]
        onboards the example package, makes the resources the cases act on through the v2 API
        (an instance NOT_INSTANTIATED, one INSTANTIATED, a COMPLETED and a FAILED_TEMP
        occurrence, a subscription), writes the request bodies the cases send into the suite's
        jsons/ (with --suite) and prints the `-v NAME:VALUE` options for robot.

    .venv/bin/python bench/tst010_v2.py version-proxy --listen 9891 --endpoint http://127.0.0.1:9890
        forwards every request to the server, adding `Version: 2.0.0` when the request has none:
        for suites written for SOL003 v2.6.1 (which send no Version header), pointed at v2.

    .venv/bin/python bench/tst010_v2.py receiver --listen 9091 --out notifications.jsonl
        a notification endpoint: answers 204 to GET (the callback test) and POST, and appends
        each POST (path, Version header, body) to --out as a JSON line.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from vnfm.examples import EXAMPLE_VNFD_ID, example_csar

V2 = "/vnflcm/v2"
VERSION = {"Version": "2.0.0"}
TERMINAL = {"COMPLETED", "FAILED_TEMP", "FAILED", "ROLLED_BACK"}

# The example package's instantiate request (examples/requests/instantiate-single-master.json)
# as v3.3.1 writes it; no vimConnectionInfo: the embedded server's default VIM is used.
INSTANTIATE: dict[str, Any] = {
    "flavourId": "simple",
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "script_path": "Scripts/install_k8s_cluster.sh",
            "vim_name": "kubernetes_vim",
            "master_node": {"aspect_id": "master_instance", "ssh_cp_name": "masterNode_CP1",
                            "nic_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "ubuntu",
                            "pod_cidr": "192.168.0.0/16", "cluster_cidr": "10.199.187.0/24",
                            "cluster_cp_name": "masterNode_CP1"},
            "worker_node": {"aspect_id": "worker_instance", "ssh_cp_name": "workerNode_CP2",
                            "nic_cp_name": "workerNode_CP2", "username": "ubuntu", "password": "ubuntu"},
        },
        "lcm-operation-user-data": "./UserData/k8s_cluster_user_data.py",
        "lcm-operation-user-data-class": "KubernetesClusterUserData",
    },
}
SCALE = {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 1}
HEAL: dict[str, Any] = {"cause": "TST 010 heal"}
TERMINATE = {"terminationType": "FORCEFUL"}


class Client:
    def __init__(self, endpoint: str) -> None:
        self.c = httpx.Client(base_url=endpoint, headers=VERSION, timeout=30)

    def ok(self, r: httpx.Response, *codes: int) -> httpx.Response:
        if r.status_code not in codes:
            sys.exit(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
        return r

    def onboard(self) -> str:
        have = self.ok(self.c.get("/vnfpkgm/v1/vnf_packages", params={"filter": f"(eq,vnfdId,{EXAMPLE_VNFD_ID})"}), 200)
        if have.json():
            return EXAMPLE_VNFD_ID
        pkg = self.ok(self.c.post("/vnfpkgm/v1/vnf_packages", json={}), 201).json()
        self.ok(self.c.put(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}/package_content", content=example_csar(),
                           headers={"Content-Type": "application/zip"}), 202)
        return str(self.until(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}", "onboardingState", {"ONBOARDED"})["vnfdId"])

    def until(self, path: str, key: str, states: set[str], timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            body: dict[str, Any] = self.ok(self.c.get(path), 200).json()
            if body.get(key) in states:
                return body
            if time.monotonic() > deadline:
                sys.exit(f"{path}: {key} still {body.get(key)} after {timeout} s")
            time.sleep(0.2)

    def create(self, vnfd_id: str) -> str:
        return str(self.ok(self.c.post(f"{V2}/vnf_instances", json={"vnfdId": vnfd_id}), 201).json()["id"])

    def task(self, inst: str, task: str, body: dict[str, Any], expect: str = "COMPLETED") -> str:
        loc = self.ok(self.c.post(f"{V2}/vnf_instances/{inst}/{task}", json=body), 202).headers["Location"]
        occ = self.until(urllib.parse.urlsplit(loc).path, "operationState", TERMINAL)
        if occ["operationState"] != expect:
            sys.exit(f"{task} of {inst} ended {occ['operationState']}, not {expect}: {occ.get('error')}")
        return str(occ["id"])


def prepare(endpoint: str, suite: Path | None, callback: str) -> None:
    api = Client(endpoint)
    vnfd_id = api.onboard()
    not_inst = api.create(vnfd_id)
    inst = api.create(vnfd_id)
    completed = api.task(inst, "instantiate", INSTANTIATE)
    failing = api.create(vnfd_id)
    api.ok(api.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}}), 204)
    failed_temp = api.task(failing, "instantiate", INSTANTIATE, expect="FAILED_TEMP")
    # another callback than the suite's own request: its POST must create a new subscription
    r = api.ok(api.c.post(f"{V2}/subscriptions", json={"callbackUri": f"{callback}/prepared"}), 201, 303)
    sub = r.headers["Location"].rsplit("/", 1)[-1]  # 303: the same subscription made by an earlier run
    if suite is not None:
        jsons = suite / "jsons"
        bodies = {"createVnfRequest.json": {"vnfdId": vnfd_id, "vnfInstanceName": "tst010"},
                  "instantiateVnfRequest.json": INSTANTIATE, "scaleVnfRequest.json": SCALE,
                  "healVnfRequest.json": HEAL, "terminateVnfRequest.json": TERMINATE,
                  "patchBodyRequest.json": {"vnfInstanceName": "tst010-patched"},
                  "lccnSubscriptionRequest.json": {"callbackUri": callback}}
        for name, body in bodies.items():
            (jsons / name).write_text(json.dumps(body, indent=2))
    ids = {"vnfdId": vnfd_id, "notInstantiatedVnfInstanceId": not_inst, "instantiatedVnfInstanceId": inst,
           "vnfLcmOpOccId (COMPLETED)": completed, "vnfLcmOpOccId (FAILED_TEMP)": failed_temp,
           "failedTempVnfInstanceId": failing, "subscriptionId": sub}
    for k, v in ids.items():
        print(f"{k}: {v}")
    print(f"-v vnfInstanceId:{inst} -v instantiatedVnfInstanceId:{inst} "
          f"-v notInstantiatedVnfInstanceId:{not_inst} -v vnfLcmOpOccId:{failed_temp} "
          f"-v vnfLcmOpOccIdNotFailedTemp:{completed} -v subscriptionId:{sub}")


def version_proxy(listen: int, endpoint: str) -> None:
    target = urllib.parse.urlsplit(endpoint)

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            if not any(k.lower() == "version" for k in headers):
                headers.update(VERSION)
            conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port or 80, timeout=120)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            finally:
                conn.close()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() == "location":  # keep the client on the proxy (a 303 is followed)
                    v = v.replace(endpoint.rstrip("/"), f"http://127.0.0.1:{listen}")
                if k.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward

    ThreadingHTTPServer(("127.0.0.1", listen), Forward).serve_forever()


def receiver(listen: int, out: Path) -> None:
    class Record(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.command == "POST":
                line = {"path": self.path, "version": self.headers.get("Version"), "body": json.loads(body or b"null")}
                with out.open("a") as f:
                    f.write(json.dumps(line) + "\n")
            self.send_response(204)
            self.end_headers()

        do_GET = do_POST = _answer

    ThreadingHTTPServer(("127.0.0.1", listen), Record).serve_forever()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pr = sub.add_parser("prepare")
    pr.add_argument("--endpoint", default="http://127.0.0.1:9890")
    pr.add_argument("--suite", type=Path, help="the suite's directory (SOL003/VNFLifecycleManagement-API)")
    pr.add_argument("--callback", default="http://127.0.0.1:9091/endpoint", help="the mock server's endpoint")
    px = sub.add_parser("version-proxy")
    px.add_argument("--listen", type=int, default=9891)
    px.add_argument("--endpoint", default="http://127.0.0.1:9890")
    rc = sub.add_parser("receiver")
    rc.add_argument("--listen", type=int, default=9091)
    rc.add_argument("--out", type=Path, default=Path("notifications.jsonl"))
    a = p.parse_args()
    if a.cmd == "prepare":
        prepare(a.endpoint, a.suite, a.callback)
    elif a.cmd == "receiver":
        receiver(a.listen, a.out)
    else:
        version_proxy(a.listen, a.endpoint)


if __name__ == "__main__":
    main()
