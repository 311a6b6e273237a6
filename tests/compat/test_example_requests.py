"""The sample request files (examples/requests) through the stock client: `openstack vnflcm
instantiate ID FILE` / `terminate` for each instantiate use case of the seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnfm.examples import example_csar

from .conftest import Cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "requests"


@pytest.fixture(scope="module")
def vnfd_id(cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> str:
    csar = tmp_path_factory.mktemp("csar") / "sample_kubernetes.zip"
    csar.write_bytes(example_csar())
    pkg_id = cli.json("vnf", "package", "create")["ID"]
    cli.run("vnf", "package", "upload", "--path", str(csar), pkg_id)
    return str(cli.json("vnf", "package", "show", pkg_id)["VNFD ID"])


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("instantiate-*.json")))
def test_sample_instantiates_with_the_stock_client(cli: Cli, vnfd_id: str, name: str) -> None:
    inst_id = cli.json("vnflcm", "create", vnfd_id, "--name", name.removesuffix(".json"))["ID"]
    out = cli.run("vnflcm", "instantiate", inst_id, str(EXAMPLES / name)).stdout
    assert "accepted" in out.lower(), out
    cli.wait_new_op(inst_id, set())
    assert cli.json("vnflcm", "show", inst_id)["Instantiation State"] == "INSTANTIATED"
    before = set(cli.ops_of(inst_id))
    cli.run("vnflcm", "terminate", inst_id)
    cli.wait_new_op(inst_id, before)
    cli.run("vnflcm", "delete", inst_id)
