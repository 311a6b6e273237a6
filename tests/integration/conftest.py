"""Fixtures for integration tests against real daemons on lightweight test hosts (harness.py).

Every test here skips, with the reason, when the machine cannot run the hosts (not root, no
namespaces, programs missing: run .ci/integration-deps.sh)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from tests.integration.harness import Testbed, TestHost, missing_programs, unavailable_reason
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
