"""Kill -9 the real server process mid-operation; after a restart the occurrence is FAILED_TEMP
and retry completes it (SOL003 error handling, engine recovery through the database)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from vnfm.entrypoints.cli.demo import instantiate_request
from vnfm.examples import example_csar

pytestmark = pytest.mark.slow


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(data: Path, port: int, boot_time: float) -> subprocess.Popen[bytes]:
    env = dict(os.environ, VNFM_DATA_DIR=str(data), VNFM_PORT=str(port), VNFM_SIM_BOOT_TIME=str(boot_time),
               VNFM_ORPHAN_AFTER="1", VNFM_PROBE_CALLBACKS="0")
    proc = subprocess.Popen([sys.executable, "-m", "vnfm.entrypoints.cli.main", "server"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/vnflcm/v1/api_versions", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server died"
        time.sleep(0.05)
    proc.kill()
    raise TimeoutError("server did not start")


def _wait_state(c: httpx.Client, op_url: str, states: set[str], timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = c.get(op_url).json()
        if body["operationState"] in states:
            return body
        assert time.monotonic() < deadline, body["operationState"]
        time.sleep(0.05)


def test_kill_mid_operation_then_retry(tmp_path: Path) -> None:
    port = _port()
    base = f"http://127.0.0.1:{port}"
    proc = _start(tmp_path, port, boot_time=0.0)
    try:
        with httpx.Client(base_url=base, timeout=10) as c:
            pkg = c.post("/vnfpkgm/v1/vnf_packages", json={}).json()
            r = c.put(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}/package_content", content=example_csar(),
                      headers={"Content-Type": "application/zip"})
            assert r.status_code == 202, r.text
            vnfd_id = c.get(f"/vnfpkgm/v1/vnf_packages/{pkg['id']}").json()["vnfdId"]
            inst = c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd_id}).json()
            r = c.post(f"/vnflcm/v1/vnf_instances/{inst['id']}/instantiate", json=instantiate_request("simple"))
            _wait_state(c, r.headers["Location"], {"COMPLETED"})
    finally:
        proc.kill()
        proc.wait()
    # Restart with slow servers, start a scale-out, and kill the process while servers boot.
    proc = _start(tmp_path, port, boot_time=30.0)
    try:
        with httpx.Client(base_url=base, timeout=10) as c:
            r = c.post(f"/vnflcm/v1/vnf_instances/{inst['id']}/scale",
                       json={"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": "1"})
            assert r.status_code == 202, r.text
            op_url = r.headers["Location"]
            _wait_state(c, op_url, {"PROCESSING"})
            deadline = time.monotonic() + 10
            while not any("adding VNFCs" in e["message"] for e in c.get(op_url).json().get("vnfmProgress", [])):
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc = _start(tmp_path, port, boot_time=0.0)
    try:
        with httpx.Client(base_url=base, timeout=10) as c:
            body = _wait_state(c, op_url, {"FAILED_TEMP"}, timeout=15)
            assert "stopped during stage 'infra_update'" in body["error"]["detail"]
            conflict = c.post(f"/vnflcm/v1/vnf_instances/{inst['id']}/heal", json={})
            assert conflict.status_code == 409
            assert conflict.headers["content-type"].startswith("application/problem+json")
            assert c.post(f"{op_url}/retry").status_code == 202
            _wait_state(c, op_url, {"COMPLETED"})
            info = c.get(f"/vnflcm/v1/vnf_instances/{inst['id']}").json()["instantiatedVnfInfo"]
            vdus = [v["vduId"] for v in info["vnfcResourceInfo"]]
            assert vdus.count("workerNode") == 3
            assert {"aspectId": "worker_instance", "scaleLevel": 1} in info["scaleStatus"]
    finally:
        proc.terminate()
        proc.wait(10)
