"""Every sample request file under examples/requests runs through the API on the simulated cloud:
instantiate (each seed use case), scale out and in, heal, terminate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Api

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "requests"
INSTANTIATE = sorted(p.name for p in EXAMPLES.glob("instantiate-*.json"))


def load(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((EXAMPLES / name).read_text())
    return body


def test_every_file_is_listed_in_the_readme() -> None:
    readme = (EXAMPLES / "README.md").read_text()
    files = sorted(p.name for p in EXAMPLES.glob("*.json"))
    assert len(INSTANTIATE) >= 4
    assert [f for f in files if f not in readme] == []


@pytest.mark.parametrize("name", INSTANTIATE)
async def test_instantiate_sample(onboarded: tuple[Api, str, str], name: str) -> None:
    api, _pkg, vnfd_id = onboarded
    body = load(name)
    inst_id = await api.create_instance(vnfd_id)
    occ = await api.run(inst_id, "instantiate", body)
    inst = await api.instance(inst_id)
    assert inst["instantiatedVnfInfo"]["flavourId"] == body["flavourId"]
    vdus = {v["vduId"] for v in inst["instantiatedVnfInfo"]["vnfcResourceInfo"]}
    assert {"masterNode", "workerNode"} <= vdus
    k8s = body["additionalParams"]["k8s_cluster_installation_param"]
    if "storage_server" in k8s:
        assert "storage_server" in vdus
    progress = " ".join(e["message"] for e in occ.get("vnfmProgress", []))
    assert "password" not in progress and "user01-password" not in json.dumps(occ)


async def test_scale_and_terminate_samples(onboarded: tuple[Api, str, str]) -> None:
    api, _pkg, vnfd_id = onboarded
    inst_id = await api.instantiated(vnfd_id, load("instantiate-single-master.json"))

    def workers(inst: dict[str, Any]) -> int:
        return sum(v["vduId"] == "workerNode" for v in inst["instantiatedVnfInfo"]["vnfcResourceInfo"])

    before = workers(await api.instance(inst_id))
    await api.run(inst_id, "scale", load("scale-out-workers.json"))
    assert workers(await api.instance(inst_id)) == before + 1
    await api.run(inst_id, "scale", load("scale-in-workers.json"))
    assert workers(await api.instance(inst_id)) == before
    await api.run(inst_id, "heal", load("heal-entire.json"))
    await api.run(inst_id, "terminate", load("terminate-graceful.json"))
    assert (await api.instance(inst_id))["instantiationState"] == "NOT_INSTANTIATED"
