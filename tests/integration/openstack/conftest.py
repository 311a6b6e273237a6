"""Fixtures for the Heat driver's tests against the local OpenStack (ci/openstack/bringup.sh).

They run when the local OpenStack answers (its $VNFM_OS_STATE/openrc exists and a token, Heat and
nova-compute respond). With VNFM_OPENSTACK_IT=1 the bring-up is run first (a few minutes cold,
~1.5 min with the install cached) and a failing bring-up fails the tests. Otherwise they skip and
say how to enable them.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.openstack.cloud import SdkCloud
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver
from vnfm.adapters.infra.openstack.openrc import access_info, read_openrc
from vnfm.domain.model import Vim
from vnfm.packaging.csar import ExtractedPackage, build_csar, extract_to, read_csar
from vnfm.packaging.tosca import parse_vnfd

REPO = Path(__file__).resolve().parents[3]
BRINGUP = REPO / "ci" / "openstack" / "bringup.sh"
STATE = Path(os.environ.get("VNFM_OS_STATE", "/var/tmp/vnfm-openstack"))
K8S_PKG = REPO / "src" / "vnfm" / "examples" / "packages" / "k8s_cluster"


VNFD_IMAGE = "ubuntu-20.04-server-cloudimg-amd64"  # the name the example VNFD gives both VDUs


def _read_openrc() -> dict[str, str]:
    return read_openrc(STATE / "openrc")


def _vim(env: dict[str, str]) -> Vim:
    return Vim(vim_type="openstack", name="local-openstack", access_info=access_info(env))


def _answers(env: dict[str, str]) -> str | None:
    """None when the cloud answers, else why not."""
    try:
        cloud = SdkCloud(_vim(env))
        try:
            conn = cloud.conn
            list(conn.orchestration.stacks())
            computes = [s for s in conn.compute.services() if s.binary == "nova-compute"]
            if not computes or any(s.state != "up" for s in computes):
                return "nova-compute is not up"
        finally:
            cloud.close()
    except Exception as exc:  # the reason is shown in the skip message
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


@pytest.fixture(scope="session")
def os_env() -> dict[str, str]:
    wanted = os.environ.get("VNFM_OPENSTACK_IT") == "1"
    reason = "no local OpenStack (no openrc)"
    if (STATE / "openrc").exists() and (STATE / "ready").exists():
        reason = _answers(_read_openrc()) or ""
        if not reason:
            return _read_openrc()
    if not wanted:
        pytest.skip(
            f"local OpenStack not available ({reason}): run ci/openstack/bringup.sh, or set VNFM_OPENSTACK_IT=1"
        )
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(BRINGUP)], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        pytest.fail(
            f"ci/openstack/bringup.sh failed (exit {proc.returncode}) after {time.monotonic() - t0:.0f} s:\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    env = _read_openrc()
    reason = _answers(env) or ""
    if reason:
        pytest.fail(f"the local OpenStack was brought up but does not answer: {reason}")
    return env


@pytest.fixture(scope="session")
def os_vim(os_env: dict[str, str]) -> Vim:
    return _vim(os_env)


@pytest.fixture(scope="session")
def os_cloud(os_vim: Vim) -> Iterator[SdkCloud]:
    cloud = SdkCloud(os_vim)
    yield cloud
    cloud.close()


@pytest.fixture(scope="session")
def k8s_package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ExtractedPackage]:
    csar = read_csar(build_csar(K8S_PKG))
    vnfd = parse_vnfd(csar)
    dest = tmp_path_factory.mktemp("k8s_pkg")
    extract_to(csar, dest)
    return vnfd, ExtractedPackage(dest)


@pytest.fixture
def heat_driver() -> HeatInfraDriver:
    return HeatInfraDriver(timeout=300, poll_initial=0.5, poll_max=2.0)


@pytest.fixture(scope="session")
def network_id(os_cloud: SdkCloud, os_env: dict[str, str]) -> str:
    net = os_cloud.conn.network.find_network(os_env.get("VNFM_OS_NETWORK", "vnfm-ci-net"))
    assert net is not None, "bringup.sh creates the test network"
    return str(net.id)


@pytest.fixture(scope="session")
def vnfd_image(os_cloud: SdkCloud) -> str:
    """The VNFD's image name exists in Glance (a 1 MiB stand-in: the fake virt driver boots nothing)."""
    img = os_cloud.find_image(VNFD_IMAGE)
    if img is None:
        img = os_cloud.upload_image(VNFD_IMAGE, b"\0" * (1024 * 1024), "raw", "bare")  # Glance checks formats
    return str(img["id"])


# --- ordered lifecycles ------------------------------------------------------------------------
# The modules here walk one VNF through its lifecycle, a step per test, in file order. Once a step
# fails, the later steps of that module skip and name it, instead of failing for its reason again.


def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    failed = call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception)
    if call.when == "call" and failed and item.get_closest_marker("lifecycle"):
        item.module.__dict__.setdefault("_lifecycle_failed", item.name)  # type: ignore[attr-defined]


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("lifecycle"):
        failed = getattr(item.module, "_lifecycle_failed", None)  # type: ignore[attr-defined]
        if failed:
            pytest.skip(f"an earlier lifecycle step failed: {failed}")
