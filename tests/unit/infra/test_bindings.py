"""Infrastructure drivers by VIM type: built-ins, plug-ins through entry points, and which node
access reaches the hosts of a VIM (a cluster's Kubernetes VIM reaches them like its cloud does)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from vnfm.adapters import plugins
from vnfm.adapters.infra.bindings import ENTRY_POINT_GROUP, InfraDrivers
from vnfm.domain.model import Vim
from vnfm.nodesteps.base import StepExecutor
from vnfm.service.ports import InfraDriver, NodeAccess, NodeHost


class Access(NodeAccess):
    def __init__(self, name: str) -> None:
        self.name = name

    def session(self, instance_id: str, hosts: Sequence[NodeHost], pins: dict[str, str]) -> StepExecutor:
        raise NotImplementedError


class FakeInfra(InfraDriver):
    vim_type = "fake"

    async def deploy(self, ctx, counts):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    async def update(self, ctx, counts, remove):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    async def heal(self, ctx, vnfc_ids, *, keep_storage=True):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    async def undeploy(self, ctx):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    async def current(self, ctx):  # type: ignore[no-untyped-def]
        raise NotImplementedError


def test_a_third_party_vim_type_plugs_in_through_an_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = SimpleNamespace(name="fake", load=lambda: FakeInfra)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [ep] if group == ENTRY_POINT_GROUP else [])
    infra = InfraDrivers(default_nodes=Access("ssh"))
    infra.load_entry_points()
    assert isinstance(infra.get("fake"), FakeInfra)
    assert infra.get("fake") is infra["fake"]  # built once
    assert infra.get("nothing") is None
    assert infra.nodes_of(Vim(vim_type="fake", name="f")).name == "ssh"  # no node access bound: SSH


def test_node_access_of_a_cluster_vim_follows_the_cloud_it_runs_on() -> None:
    cloud = Vim(vim_type="simulator", name="sim")
    mine = Vim(vim_type="kubernetes", name="k8s", extra={"infra_vim_id": cloud.id, "vnf_instance_id": "i"})
    foreign = Vim(vim_type="kubernetes", name="operator's", extra={})
    vims = {v.id: v for v in (cloud, mine, foreign)}
    infra = InfraDrivers(default_nodes=Access("ssh"), vim_of=vims.get)
    infra.register_nodes("simulator", Access("twin"))
    assert infra.nodes_of(cloud).name == "twin"
    assert infra.nodes_of(mine).name == "twin"
    assert infra.nodes_of(foreign).name == "ssh"
