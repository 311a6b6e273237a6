"""Unit tests of the Heat driver: template loading, parameter computation, resource mapping and the
call sequences (scale in marks exactly the VNFCs to remove, heal marks the server), on a fake cloud."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import yaml

from tests.unit.openstack.fake_cloud import FakeCloud
from vnfm.adapters.infra.openstack import stacks
from vnfm.adapters.infra.openstack.cloud import auth_args
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver, HeatStackError, pick_flavor
from vnfm.adapters.infra.openstack.hot import VduChoice, build_parameters, load_base_hot, vnfd_node_extras
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import Vim
from vnfm.domain.vnfd import Cp, Flavour, Vdu, Vnfd
from vnfm.packaging.csar import ExtractedPackage
from vnfm.service.ports import InfraContext

from .conftest import EXT, IMAGE, DictPackage, make_ctx


# ====================================================================== templates and parameters
def test_base_hot_of_the_k8s_package(k8s: tuple[Vnfd, ExtractedPackage]) -> None:
    vnfd, pkg = k8s
    hot = load_base_hot(pkg, vnfd.flavour("simple"))
    assert hot.top_path == "BaseHOT/simple/base_hot_top.yaml"
    assert sorted(hot.files) == ["base_hot_nested_master.yaml", "base_hot_nested_worker.yaml"]
    assert {n: (g.vdus, g.min_size, g.max_size) for n, g in hot.groups.items()} == {
        "master_instance": (["masterNode"], 1, 1),
        "worker_instance": (["workerNode"], 2, 6),
    }
    assert hot.template["heat_template_version"] == "2013-05-23"  # a string, as Heat wants it
    tpl = hot.with_capacities({"masterNode": 1, "workerNode": 5})
    assert tpl["resources"]["worker_instance"]["properties"]["desired_capacity"] == 5
    assert hot.template["resources"]["worker_instance"]["properties"]["desired_capacity"] == 2, "not mutated"
    with pytest.raises(UnprocessableEntity, match="max_size 6"):
        hot.with_capacities({"masterNode": 1, "workerNode": 7})
    assert hot.referenced_cps() == {"masterNode_CP1", "workerNode_CP2"}


def test_parameters_from_vnfd_and_request(k8s: tuple[Vnfd, ExtractedPackage]) -> None:
    vnfd, pkg = k8s
    flavour = vnfd.flavour("simple")
    hot = load_base_hot(pkg, flavour)
    choices = {"masterNode": VduChoice("m1.medium", "img-1"), "workerNode": VduChoice("m1.small", "img-1")}
    params = build_parameters(hot, flavour, {"masterNode": 1, "workerNode": 3}, choices, EXT, {})
    assert params == {
        "nfv": {
            "VDU": {
                "masterNode": {"flavor": "m1.medium", "image": "img-1", "desired_capacity": 1},
                "workerNode": {"flavor": "m1.small", "image": "img-1", "desired_capacity": 3},
            },
            "CP": {
                "masterNode_CP1": {"network": "net-1", "fixed_ips": [{"ip_address": "10.0.0.99"}]},
                "workerNode_CP2": {"network": "net-1"},
            },
        }
    }
    with pytest.raises(UnprocessableEntity, match="CP workerNode_CP2 has no network"):
        build_parameters(hot, flavour, {"masterNode": 1, "workerNode": 2}, choices, EXT[:0] + [
            {"id": "e", "resourceId": "n", "extCps": [{"cpdId": "masterNode_CP1"}]}], {})


def test_vnfd_extras_and_flavor_choice(k8s: tuple[Vnfd, ExtractedPackage]) -> None:
    vnfd, pkg = k8s
    extras = vnfd_node_extras(pkg)
    assert extras["masterNode"]["flavor"] == "m1.medium"
    assert extras["workerNode"]["image_name"] == IMAGE
    flavors = FakeCloud().list_flavors()
    assert pick_flavor(Vdu("v", "v", num_cpus=1, memory_mb=1024), flavors) == "m1.small"
    assert pick_flavor(Vdu("v", "v", num_cpus=2, memory_mb=4096), flavors) == "m1.medium"
    with pytest.raises(UnprocessableEntity, match="no flavor in the VIM has 8"):
        pick_flavor(Vdu("v", "v", num_cpus=8, memory_mb=1), flavors)


def test_auth_args_from_access_info() -> None:
    vim = Vim(vim_type="openstack", name="x", access_info={
        "authUrl": "https://ks:5000/v3", "username": "u", "password": "p", "project": "demo",
        "userDomain": "D1", "projectDomain": "D2", "region": "R2", "cacert": "/ca.pem"})
    assert auth_args(vim) == {
        "auth_url": "https://ks:5000/v3", "auth_type": "password", "username": "u", "password": "p",
        "project_name": "demo", "project_domain_name": "D2", "user_domain_name": "D1", "region_name": "R2",
        "cacert": "/ca.pem"}
    app = Vim(vim_type="openstack", name="x", access_info={
        "authUrl": "https://ks", "applicationCredentialId": "i", "applicationCredentialSecret": "s"})
    assert auth_args(app)["auth_type"] == "v3applicationcredential"
    with pytest.raises(UnprocessableEntity, match="authUrl"):
        auth_args(Vim(vim_type="openstack", name="x", access_info={}))
    with pytest.raises(UnprocessableEntity, match="username and password") as err:
        auth_args(Vim(vim_type="openstack", name="x", access_info={"authUrl": "h", "password": "secret-pw"}))
    assert "secret-pw" not in str(err.value)


# ====================================================================== lifecycle on the fake cloud
async def test_deploy_maps_stack_resources(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: tuple[Vnfd, ExtractedPackage]
) -> None:
    ctx = make_ctx(k8s)
    res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    assert res.counts() == {"masterNode": 1, "workerNode": 2}
    assert [c[0] for c in cloud.calls] == ["create_stack"]
    for v in res.vnfcs:
        assert v.id in cloud.stacks, "a group member's VNFC id is its nested stack id"
        assert cloud.servers[v.server_id]["name"] == v.vdu_id
        (cp,) = v.cps
        port = cloud.ports[cp.port_id]
        assert port["device_id"] == v.server_id and port["network_id"] == "net-1" == cp.network_id
        assert cp.ip_addresses == [port["fixed_ips"][0]["ip_address"]]
        assert cp.ext_virtual_link_id == "evl-1"
        assert v.metadata["flavor"] == "m1.medium"
        assert v.metadata["image"] == cloud.find_image(IMAGE)["id"]  # type: ignore[index]
    assert sorted(v.seq for v in res.vnfcs) == [1, 2, 3]
    ctx.resources = res
    again = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    assert [(v.id, v.server_id, v.seq) for v in again.vnfcs] == [(v.id, v.server_id, v.seq) for v in res.vnfcs]
    assert [c[0] for c in cloud.calls] == ["create_stack", "update_stack"], "a second deploy converges"


async def test_scale_out_then_in_removes_exactly_the_named(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: tuple[Vnfd, ExtractedPackage]
) -> None:
    ctx = make_ctx(k8s)
    ctx.resources = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    ctx.resources = out = await driver.update(ctx, {"masterNode": 1, "workerNode": 4}, [])
    update = [c for c in cloud.calls if c[0] == "update_stack"][-1]
    assert update[2]["resources"]["worker_instance"]["properties"]["desired_capacity"] == 4
    assert update[3]["nfv"]["VDU"]["workerNode"]["desired_capacity"] == 4
    workers = out.of_vdu("workerNode")
    victims = [workers[0].id, workers[2].id]
    with pytest.raises(UnprocessableEntity, match="removes 2, but `remove` names 1"):
        await driver.update(ctx, {"masterNode": 1, "workerNode": 2}, victims[:1])
    res = await driver.update(ctx, {"masterNode": 1, "workerNode": 2}, victims)
    marks = [c for c in cloud.calls if c[0] == "mark_unhealthy"]
    assert len(marks) == 2 and all(c[1] not in victims for c in marks), "marked in the group's nested stack"
    assert {v.id for v in res.of_vdu("workerNode")} == {workers[1].id, workers[3].id}
    assert res.by_id(workers[1].id).seq == workers[1].seq  # type: ignore[union-attr]
    # a retry of the same scale in converges (the VNFCs are already gone)
    ctx.resources = res
    again = await driver.update(ctx, {"masterNode": 1, "workerNode": 2}, victims)
    assert again.ids() == res.ids()


async def test_heal_one_keeps_id_and_port(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: tuple[Vnfd, ExtractedPackage]
) -> None:
    ctx = make_ctx(k8s)
    ctx.resources = res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 3})
    target = res.of_vdu("workerNode")[1]
    healed = await driver.heal(ctx, [target.id])
    assert ("mark_unhealthy", target.id, "workerNode") in cloud.calls, "the server inside the member stack"
    v = healed.by_id(target.id)
    assert v is not None and v.server_id != target.server_id and target.server_id not in cloud.servers
    assert v.cps[0].port_id == target.cps[0].port_id and v.cps[0].ip_addresses == target.cps[0].ip_addresses
    assert healed.counts() == {"masterNode": 1, "workerNode": 3}, "heal passes the current capacities"
    assert {(x.id, x.server_id) for x in healed.vnfcs if x.id != target.id} == {
        (x.id, x.server_id) for x in res.vnfcs if x.id != target.id
    }
    with pytest.raises(UnprocessableEntity, match="do not exist"):
        await driver.heal(ctx, ["nope"])


async def test_failure_carries_heats_reason_and_undeploy_is_idempotent(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: tuple[Vnfd, ExtractedPackage]
) -> None:
    ctx = make_ctx(k8s, additional_params={"nfv": {"VDU": {"workerNode": {"image": "no-such-image"}}}})
    with pytest.raises(HeatStackError) as err:
        await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    assert err.value.stack_status == "CREATE_FAILED"
    assert "No images matching {'name': 'no-such-image'}" in err.value.detail
    await driver.undeploy(ctx)
    assert await driver.current(ctx) == type(await driver.current(ctx))()
    await driver.undeploy(ctx)
    assert [c[0] for c in cloud.calls].count("delete_stack") == 1


async def test_await_ignores_a_stale_status(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: tuple[Vnfd, ExtractedPackage]
) -> None:
    """Right after an update request an old UPDATE_COMPLETE (same updated_time) is not the answer."""
    ctx = make_ctx(k8s)
    ctx.resources = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    stack = cloud.find_stack(f"vnf-{ctx.instance_id}")
    assert stack is not None
    st = cloud.stacks[stack["id"]]
    st.update(stack_status="UPDATE_COMPLETE", updated_time="old")
    seen: list[str] = []
    orig = cloud.find_stack

    def find(name_or_id: str) -> dict[str, Any] | None:
        got = orig(name_or_id)
        seen.append(got["stack_status"] if got else "none")
        if len(seen) == 2:  # the engine starts working only now
            st.update(stack_status="UPDATE_IN_PROGRESS", updated_time="new", pending=("UPDATE_COMPLETE", ""))
        return got

    cloud.find_stack = find  # type: ignore[method-assign]
    await stacks.wait(ctx, cloud, {"id": stack["id"], "stack_name": stack["stack_name"]}, "UPDATE", driver.timing,
                      since="old")
    assert seen[:2] == ["UPDATE_COMPLETE", "UPDATE_COMPLETE"] and "UPDATE_IN_PROGRESS" in seen


async def test_deadline(driver: HeatInfraDriver, cloud: FakeCloud, k8s: tuple[Vnfd, ExtractedPackage]) -> None:
    ctx = make_ctx(k8s)
    sid = cloud.create_stack("vnf-x", {"resources": {}}, {}, {}, 1)
    cloud.stacks[sid].pop("pending")
    driver.timing.timeout = 0.05
    with pytest.raises(HeatStackError, match="not CREATE_COMPLETE after 0 s"):
        await stacks.wait(ctx, cloud, {"id": sid, "stack_name": "vnf-x"}, "CREATE", driver.timing)


# ====================================================================== a package with an image file
async def test_single_server_vdu_and_image_uploaded_from_the_package(
    driver: HeatInfraDriver, cloud: FakeCloud
) -> None:
    definitions = {"topology_template": {"node_templates": {"VDU1": {
        "type": "tosca.nodes.nfv.Vdu.Compute",
        "properties": {"sw_image_data": {"name": "tiny-img", "disk_format": "raw", "container_format": "bare"}},
        "artifacts": {"sw_image": {"type": "tosca.artifacts.nfv.SwImage", "file": "../Files/images/tiny.img"}},
    }}}}
    top = {"heat_template_version": "2018-08-31", "parameters": {"nfv": {"type": "json"}}, "resources": {
        "VDU1": {"type": "OS::Nova::Server", "properties": {
            "image": {"get_param": ["nfv", "VDU", "VDU1", "image"]},
            "flavor": {"get_param": ["nfv", "VDU", "VDU1", "flavor"]},
            "networks": [{"port": {"get_resource": "CP1"}}]}},
        "CP1": {"type": "OS::Neutron::Port", "properties": {"network": {"get_param": ["nfv", "CP", "CP1", "network"]}}},
    }}
    pkg = DictPackage({
        "Definitions/vnfd.yaml": yaml.safe_dump(definitions).encode(),
        "Files/images/tiny.img": b"\0" * 64,
        "BaseHOT/df/top.yaml": yaml.safe_dump(top).encode(),
    })
    flavour = Flavour(id="df", vdus={"VDU1": Vdu("VDU1", "VDU1", sw_image="tiny-img", num_cpus=1, memory_mb=512)},
                      cps={"CP1": Cp("CP1", "VDU1")})
    vnfd = Vnfd(id="d", version="1", provider="p", product_name="n", software_version="1", flavours={"df": flavour})
    ctx = InfraContext(instance_id="i-1", op_id="o", vnfd=vnfd, flavour=flavour, package=pkg,
                       vim=Vim(vim_type="openstack", name="os"),
                       ext_virtual_links=[{"id": "e", "resourceId": "net-9", "extCps": [{"cpdId": "CP1"}]}])
    res = await driver.deploy(ctx, {"VDU1": 1})
    assert ("upload_image", "tiny-img", 64, "raw") in cloud.calls
    (v,) = res.vnfcs
    assert v.metadata["flavor"] == "m1.tiny" and v.cps[0].network_id == "net-9"
    assert v.id == str(uuid.uuid5(uuid.UUID("6f0d3a5e-2b1c-4e55-9c1e-7a0b5d1f2e83"), f"{res.stack_id}/VDU1"))
    with pytest.raises(UnprocessableEntity, match="single server of the top template"):
        await driver.update(ctx, {"VDU1": 2}, [])
    # the image is uploaded once: the second call finds it in Glance
    await driver.deploy(ctx, {"VDU1": 1})
    assert [c[0] for c in cloud.calls].count("upload_image") == 1
