"""The stock client onboards packages shaped like Tacker's samples (kubeadm, private registry,
Kubespray, CNF NodePort), the first commands a user migrating from Tacker types:
`openstack vnf package create` / `upload --path` / `show`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import TACKER_SAMPLES, tacker_sample_csar

from .conftest import Cli

pytestmark = pytest.mark.slow


def test_tacker_shaped_samples_onboard_with_the_stock_client(cli: Cli, tmp_path: Path) -> None:
    ids = {}
    for name in TACKER_SAMPLES:
        path = tmp_path / f"{name}_csar.zip"
        path.write_bytes(tacker_sample_csar(name))
        ids[name] = cli.json("vnf", "package", "create")["ID"]
        out = cli.run("vnf", "package", "upload", "--path", str(path), ids[name]).stdout
        assert "accepted" in out.lower(), (name, out)
    shown = cli.many(*(("vnf", "package", "show", pkg_id) for pkg_id in ids.values()))
    for name, show in zip(ids, shown, strict=True):
        assert show["Onboarding State"] == "ONBOARDED", (name, show)
        assert show["Operational State"] == "ENABLED", (name, show)
