from __future__ import annotations

from types import SimpleNamespace

import pytest

from vnfm.adapters.mgmt import registry as reg_mod
from vnfm.adapters.mgmt.basic import NoopDriver, VmReadinessDriver
from vnfm.adapters.mgmt.registry import MgmtRegistry
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Artifact, Flavour


def flavour(impl: str = "mgmt-drivers-kubernetes", file: str = "Scripts/kubernetes_mgmt.py") -> Flavour:
    return Flavour(id="f", hooks={"instantiate_end": impl, "scale_end": impl},
                   artifacts={impl: Artifact(impl, "tosca.artifacts.Implementation.Python", file)})


def test_seed_name_binds_to_builtin_driver() -> None:
    reg = MgmtRegistry()
    reg.register("kubernetes", VmReadinessDriver)
    driver = reg.for_hook(flavour(), "instantiate_end")
    assert isinstance(driver, VmReadinessDriver)
    assert reg.for_hook(flavour(), "scale_end") is driver  # one instance per driver
    assert reg.for_hook(flavour(), "heal_end") is None  # hook not declared


def test_unknown_implementation_is_refused_with_guidance() -> None:
    reg = MgmtRegistry()
    with pytest.raises(UnprocessableEntity) as err:
        reg.check(flavour("my-own-driver", "Scripts/mine.py"))
    assert "my-own-driver" in err.value.detail and "never executed" in err.value.detail
    assert "VNFM_DRIVER_BINDINGS" in err.value.detail


def test_operator_bindings_and_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = MgmtRegistry(MgmtRegistry.parse_bindings("my-own-driver=noop"))
    reg.register("noop", NoopDriver)
    assert isinstance(reg.for_hook(flavour("my-own-driver"), "instantiate_end"), NoopDriver)
    with pytest.raises(ValueError, match="implementation=driver"):
        MgmtRegistry.parse_bindings("broken")

    class Plugin(NoopDriver):
        name = "plugin"

    ep = SimpleNamespace(name="thirdparty", load=lambda: Plugin)
    monkeypatch.setattr(reg_mod, "entry_points", lambda group: [ep] if group == reg_mod.ENTRY_POINT_GROUP else [])
    reg2 = MgmtRegistry()
    reg2.load_entry_points()
    assert isinstance(reg2.for_hook(flavour("thirdparty"), "scale_end"), Plugin)
