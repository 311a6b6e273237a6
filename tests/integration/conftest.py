"""Fixtures for integration tests against real daemons on lightweight test hosts (harness.py).

Every test here skips, with the reason, when the machine cannot run the hosts (not root, no
namespaces, programs missing: run .ci/integration-deps.sh)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from tests.integration.harness import Testbed, TestHost, missing_programs, unavailable_reason
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor


def require(*programs: str) -> None:
    missing = missing_programs(*programs)
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (run .ci/integration-deps.sh)")


@pytest.fixture(scope="session")
def testbed() -> Iterator[Testbed]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"test hosts unavailable: {reason}")
    bed = Testbed()
    bed.open()
    try:
        yield bed
    finally:
        bed.close()


@pytest.fixture
def make_hosts(testbed: Testbed) -> Iterator[Callable[[int], list[TestHost]]]:
    """make_hosts(n) starts n fresh hosts; all are destroyed when the test ends, pass or fail."""
    started: list[TestHost] = []

    def make(n: int) -> list[TestHost]:
        hosts = testbed.start_hosts(n)
        started.extend(hosts)
        return hosts

    yield make
    testbed.destroy_hosts(started)


@pytest.fixture
async def ssh() -> AsyncIterator[SshExecutor]:
    async with SshExecutor(command_timeout=60) as ex:
        yield ex


@pytest.fixture(autouse=True)
def _script_audit(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """With VNFM_SCRIPT_AUDIT=FILE, append one JSON line per node script run over SSH (test id,
    script, whether it succeeded) to FILE: how tests/test_script_audit.py's table was checked."""
    path = os.environ.get("VNFM_SCRIPT_AUDIT")
    if not path:
        return
    original = SshStepExecutor.script

    async def script(self: SshStepExecutor, target: Any, step: Any, name: str, *a: Any, **kw: Any) -> Any:
        ok = False
        try:
            out = await original(self, target, step, name, *a, **kw)
            ok = True
            return out
        finally:
            with open(path, "a") as f:
                f.write(json.dumps({"test": request.node.nodeid, "script": name, "ok": ok}) + "\n")

    monkeypatch.setattr(SshStepExecutor, "script", script)
