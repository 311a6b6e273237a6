"""The request bodies vnfm promises to accept still validate against the declared schemas: every
file of examples/requests, the seeds' bodies the tests use, and the bodies of the seed documents
themselves (when /work/shared/seeds is there). Schema level: the same check the service runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.kubernetes.conftest import PARAMS as KUBEADM_PARAMS
from tests.unit.kubernetes.test_cnf import cnf_body
from tests.unit.kubespray.conftest import OVERRIDES
from tests.unit.kubespray.conftest import params as kubespray_params
from tests.unit.mgmt.test_private_registry import body as registry_body
from tests.unit.service.conftest import SEED_PARAMS
from vnfm.adapters.infra.kubernetes.params import DECLARED as KUBERNETES
from vnfm.adapters.mgmt.cluster.params import DECLARED as KUBEADM
from vnfm.adapters.mgmt.cnf_nodeport.params import DECLARED as CNF
from vnfm.adapters.mgmt.kubespray.params import DECLARED as KUBESPRAY
from vnfm.adapters.mgmt.private_registry.params import DECLARED as REGISTRY
from vnfm.domain.params import Declared
from vnfm.service import params as engine

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples" / "requests").glob("*.json"))
SEEDS = Path("/work/shared/seeds")


def accepted(operation: str, extra: dict[str, Any], driver: Declared[Any], stored: dict[str, Any] | None = None,
             infra: Declared[Any] | None = None) -> None:
    """The service's key check, then the driver's parse (merged with `stored` for scale and heal)."""
    engine.check(operation, extra, infra=infra, drivers=[driver], elsewhere={}, flavour_id="simple", package=None)
    if operation in ("INSTANTIATE", "SCALE", "HEAL"):
        driver.for_operation(operation, stored or {}, extra)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_request_validates(path: Path) -> None:
    body = json.loads(path.read_text())
    operation = {"instantiate": "INSTANTIATE", "scale": "SCALE", "heal": "HEAL", "terminate": "TERMINATE"}[
        path.name.split("-")[0]]
    stored = json.loads((path.parent / "instantiate-single-master.json").read_text())["additionalParams"]
    accepted(operation, body.get("additionalParams") or {}, KUBEADM, stored)


def test_the_seed_bodies_the_tests_use_validate() -> None:
    accepted("INSTANTIATE", KUBEADM_PARAMS, KUBEADM)
    accepted("INSTANTIATE", SEED_PARAMS, KUBEADM)
    accepted("INSTANTIATE", kubespray_params(), KUBESPRAY)
    accepted("SCALE", OVERRIDES, KUBESPRAY, kubespray_params())
    accepted("HEAL", OVERRIDES, KUBESPRAY, kubespray_params())
    accepted("INSTANTIATE", registry_body()["additionalParams"], REGISTRY)
    accepted("INSTANTIATE", cnf_body("vim-1", "192.168.10.182")["additionalParams"], CNF, infra=KUBERNETES)


def _seed_bodies() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    decoder = json.JSONDecoder()
    for f in sorted(SEEDS.glob("0*.txt")) if SEEDS.is_dir() else []:
        text, i = f.read_text(), 0
        while (i := text.find("{", i)) >= 0:
            try:
                obj, i = decoder.raw_decode(text, i)
            except ValueError:
                i += 1
                continue
            if isinstance(obj, dict) and isinstance(obj.get("additionalParams"), dict):
                out.append((f.name[:3], obj))
    return out


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents are not on this machine")
def test_the_seed_documents_bodies_validate() -> None:
    bodies = _seed_bodies()
    assert len(bodies) >= 5
    for seed, body in bodies:
        extra = body["additionalParams"]
        if "lcm-kubernetes-def-files" in extra:
            accepted("INSTANTIATE", extra, CNF, infra=KUBERNETES)
        elif "private_registry_installation_param" in extra:
            accepted("INSTANTIATE", extra, REGISTRY)
        elif seed == "002":  # a Kubespray heal with whole dicts
            accepted("HEAL", extra, KUBESPRAY, kubespray_params())
        else:
            accepted("INSTANTIATE", extra, KUBEADM)
