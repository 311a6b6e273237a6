"""The stock python-tackerclient (`openstack ...`, no Keystone) against a vnfm server running in a
thread of this process: the `server` and `cli` fixtures each test module of tests/compat uses."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from vnfm.config import Settings
from vnfm.entrypoints.api.server import ServerHandle, start_in_thread

VENV_BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"


def _openstack() -> str | None:
    """The repository's venv's `openstack`, else the one next to this Python (a shared venv), else PATH's."""
    for exe in (VENV_BIN / "openstack", Path(sys.executable).parent / "openstack"):
        if exe.is_file():
            return str(exe)
    return shutil.which("openstack")


class Cli:
    def __init__(self, exe: str, url: str) -> None:
        self.exe = exe
        self.url = url
        # No OS_* variables from the caller's environment (a real cloud's credentials must not leak in).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.http = httpx.Client(base_url=url, timeout=10, trust_env=False)

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [self.exe, "--os-auth-type", "none", "--os-endpoint", self.url, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def json(self, *args: str) -> Any:
        out = self.run(*args, "-f", "json").stdout
        try:
            return json.loads(out)
        except ValueError:
            raise AssertionError(f"{' '.join(args)}: not JSON:\n{out}") from None

    def many(self, *calls: tuple[str, ...]) -> list[Any]:
        """Independent `-f json` calls, concurrently."""
        with ThreadPoolExecutor(len(calls)) as pool:
            return list(pool.map(lambda c: self.json(*c), calls))

    def ops_of(self, inst_id: str) -> dict[str, dict[str, Any]]:
        r = self.http.get("/vnflcm/v1/vnf_lcm_op_occs", params={"filter": f"(eq,vnfInstanceId,{inst_id})"})
        ops = r.json()
        while "next" in r.links:  # paged (Link: <...>; rel="next")
            r = self.http.get(r.links["next"]["url"])
            ops += r.json()
        return {o["id"]: o for o in ops}

    def wait_new_op(self, inst_id: str, before: set[str], timeout: float = 30.0) -> dict[str, Any]:
        """The occurrence started since `before` (ids), once it has ended (polled over HTTP: cheap)."""
        deadline = time.monotonic() + timeout
        while True:
            new = [o for i, o in self.ops_of(inst_id).items() if i not in before]
            assert len(new) <= 1, new
            if new and new[0]["operationState"] in ("COMPLETED", "FAILED_TEMP", "FAILED", "ROLLED_BACK"):
                assert new[0]["operationState"] == "COMPLETED", new[0]
                return new[0]
            assert time.monotonic() < deadline, new or "no new occurrence"
            time.sleep(0.02)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    data = tmp_path_factory.mktemp("vnfm-compat")
    # page_size=2: the client's lists (5 occurrences, several packages) come in pages it must follow
    handle = start_in_thread(Settings(data_dir=data, port=0, probe_callbacks=False, sim_boot_time=0,
                                      sim_step_time=0, auth_token="", page_size=2,
                                      egress_allow_networks=["127.0.0.0/8"]))  # its package server is local
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="module")
def cli(server: ServerHandle) -> Iterator[Cli]:
    exe = _openstack()
    if exe is None:
        pytest.skip("the `openstack` command (python-openstackclient + python-tackerclient) is not installed")
    c = Cli(exe, server.url)
    if importlib.util.find_spec("tackerclient") is None:
        pytest.skip("python-tackerclient is not installed: `openstack vnflcm` / `vnf package` are missing")
    yield c
    c.http.close()
