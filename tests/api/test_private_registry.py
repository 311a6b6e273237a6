"""The private-registry VNF (seed 003) through the REST API: the seed's instantiate body as written
on a package shaped like Tacker's sample, the registry in GET /sim/v1/state/{id}, and a request
error naming the key (before any occurrence exists)."""

from __future__ import annotations

import copy

from tests.unit.mgmt.registry_pkg import registry_csar
from tests.unit.mgmt.test_private_registry import PASSWORD, SEED

from .conftest import Api

R = "private_registry_installation_param"


async def _instance(api: Api) -> str:
    pkg_id = await api.create_package()
    r = await api.upload(pkg_id, registry_csar())
    assert r.status_code == 202, r.text
    vnfd_id = (await api.c.get(f"/vnfpkgm/v1/vnf_packages/{pkg_id}")).json()["vnfdId"]
    return await api.create_instance(vnfd_id)


async def test_seed_body_instantiates_the_registry(api: Api) -> None:
    inst_id = await _instance(api)
    await api.run(inst_id, "instantiate", SEED)
    state = (await api.c.get(f"/sim/v1/state/{inst_id}")).json()
    reg = state["private_registry"]
    assert reg["port"] == 5000 and reg["tls"] is False and reg["repositories"] == {}
    assert reg["url"] == f"http://{reg['address']}:5000"
    shown = (await api.c.get(f"/vnflcm/v1/vnf_instances/{inst_id}")).text
    assert PASSWORD not in shown and PASSWORD not in str(state)


async def test_a_port_out_of_range_is_refused_naming_the_key(api: Api) -> None:
    inst_id = await _instance(api)
    body = copy.deepcopy(SEED)
    body["additionalParams"][R]["port_no"] = 70000
    r = await api.c.post(f"/vnflcm/v1/vnf_instances/{inst_id}/instantiate", json=body)
    assert r.status_code == 400, r.text
    assert f"{R}.port_no" in r.json()["detail"] and PASSWORD not in r.text
    ops = (await api.c.get("/vnflcm/v1/vnf_lcm_op_occs")).json()
    assert [o for o in ops if o["vnfInstanceId"] == inst_id] == []
