"""The shipped alert rules in a real Prometheus (Debian package `prometheus`) scraping a real vnfm
server with its API token: the scrape succeeds, every rule evaluates without error on the live
series, and an occurrence in FAILED_TEMP makes VnfmOperationFailedTemp pending (its `for:` is
5 minutes, so it does not fire within a test)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from vnfm.entrypoints.api.server import start_in_thread

from .conftest import Api, settings_for
from .test_alerting import RULES, _failed_instantiate, rule_exprs

pytestmark = pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus is not installed here "
                                "(Debian package prometheus, .ci/integration-deps.sh)")
TOKEN = "scrape-t0ken"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """A vnfm server (API token set) and a Prometheus scraping it every second with the rules."""
    handle = start_in_thread(settings_for(tmp_path / "data", host="127.0.0.1", port=0, auth_token=TOKEN,
                                          metrics_cache_seconds=0))
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [{"job_name": "vnfm", "static_configs": [{"targets": [handle.url.split("//")[1]]}],
                            "authorization": {"credentials_file": str(token_file)}}],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    web = f"127.0.0.1:{_free_port()}"
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen(["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address={web}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        _until(lambda: httpx.get(f"http://{web}/-/ready", timeout=2).status_code == 200, 60, "Prometheus ready",
               proc)
        yield f"http://{web}", handle
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        handle.stop()


def _until(check: Any, timeout: float, what: str, proc: subprocess.Popen[bytes] | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = check()
        except httpx.HTTPError:
            got = None
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"prometheus exited ({proc.returncode}) before: {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout} s: {what}")
        time.sleep(0.2)


def _get(base: str, path: str, **params: str) -> Any:
    r = httpx.get(f"{base}{path}", params=params, timeout=5)
    r.raise_for_status()
    return r.json()["data"]


async def test_the_rules_in_a_real_prometheus(prometheus: tuple[str, Any]) -> None:
    base, handle = prometheus
    async with httpx.AsyncClient(base_url=handle.url, headers={"X-Auth-Token": TOKEN}, timeout=30) as client:
        api = Api(handle.server.config.app, client)
        _pkg, vnfd_id = await api.onboard()
        await _failed_instantiate(api, vnfd_id)

    def pending() -> list[dict[str, Any]]:
        return [a for a in _get(base, "/api/v1/alerts")["alerts"] if a["labels"]["alertname"] ==
                "VnfmOperationFailedTemp"]

    alerts = await asyncio.to_thread(_until, pending, 60, "VnfmOperationFailedTemp pending")
    assert [(a["state"], a["labels"]["operation"], float(a["value"])) for a in alerts] == [
        ("pending", "INSTANTIATE", 1.0)]
    up = _get(base, "/api/v1/query", query='up{job="vnfm"}')["result"]
    assert [float(s["value"][1]) for s in up] == [1.0]  # the scrape carries the token
    build = _get(base, "/api/v1/query", query="vnfm_build_info")["result"]
    assert build and build[0]["metric"]["version"]

    def evaluated() -> list[dict[str, Any]]:
        rules = [r for g in _get(base, "/api/v1/rules")["groups"] for r in g["rules"]]
        return rules if all(not r["lastEvaluation"].startswith("0001-") for r in rules) else []  # never: year 1

    rules = await asyncio.to_thread(_until, evaluated, 30, "every rule evaluated")
    assert len(rules) == len(rule_exprs()) and {r["health"] for r in rules} == {"ok"}, [(r["name"], r.get("lastError"))
                                                                         for r in rules]
    firing = {a["labels"]["alertname"] for a in _get(base, "/api/v1/alerts")["alerts"]}
    assert firing == {"VnfmOperationFailedTemp"}  # nothing else is wrong with this server
