from __future__ import annotations

from types import SimpleNamespace

import pytest

from vnfm.adapters import plugins
from vnfm.adapters.mgmt import bindings as reg_mod
from vnfm.adapters.mgmt.basic import NoopDriver, VmReadinessDriver
from vnfm.adapters.mgmt.bindings import MgmtDrivers
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Artifact, Flavour


def flavour(impl: str = "mgmt-drivers-kubernetes", file: str = "Scripts/kubernetes_mgmt.py") -> Flavour:
    return Flavour(id="f", hooks={"instantiate_end": impl, "scale_end": impl},
                   artifacts={impl: Artifact(impl, "tosca.artifacts.Implementation.Python", file)})


def test_seed_name_binds_to_builtin_driver() -> None:
    reg = MgmtDrivers()
    reg.register("kubeadm", VmReadinessDriver)
    driver = reg.for_hook(flavour(), "instantiate_end")
    assert isinstance(driver, VmReadinessDriver)
    assert reg.for_hook(flavour(), "scale_end") is driver  # one instance per driver
    assert reg.for_hook(flavour(), "heal_end") is None  # hook not declared


def test_unknown_implementation_is_refused_with_guidance() -> None:
    reg = MgmtDrivers()
    with pytest.raises(UnprocessableEntity) as err:
        reg.check(flavour("my-own-driver", "Scripts/mine.py"))
    assert "my-own-driver" in err.value.detail and "never executed" in err.value.detail
    assert "VNFM_DRIVER_BINDINGS" in err.value.detail


def test_operator_bindings_and_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = MgmtDrivers(MgmtDrivers.parse_bindings("my-own-driver=noop"))
    reg.register("noop", NoopDriver)
    assert isinstance(reg.for_hook(flavour("my-own-driver"), "instantiate_end"), NoopDriver)
    with pytest.raises(ValueError, match="implementation=driver"):
        MgmtDrivers.parse_bindings("broken")

    class Plugin(NoopDriver):
        name = "plugin"

    ep = SimpleNamespace(name="thirdparty", load=lambda: Plugin)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [ep] if group == reg_mod.ENTRY_POINT_GROUP else [])
    reg2 = MgmtDrivers()
    reg2.load_entry_points()
    assert isinstance(reg2.for_hook(flavour("thirdparty"), "scale_end"), Plugin)


def test_kubespray_packages_are_not_silently_bound_to_kubeadm() -> None:
    """A package naming the Kubespray driver must not run the kubeadm driver and report success."""
    reg = MgmtDrivers()
    reg.register("kubeadm", NoopDriver)
    with pytest.raises(UnprocessableEntity, match="mgmt-drivers-kubespray"):
        reg.check(flavour("mgmt-drivers-kubespray", "Scripts/kubespray_mgmt.py"))


def test_former_driver_name_still_accepted_in_operator_bindings() -> None:
    reg = MgmtDrivers(MgmtDrivers.parse_bindings("my-artifact=kubernetes"))
    reg.register("kubeadm", NoopDriver)
    assert isinstance(reg.for_hook(flavour("my-artifact"), "instantiate_end"), NoopDriver)
    assert reg.driver("kubernetes") is reg.driver("kubeadm")


def test_a_broken_entry_point_is_logged_and_skipped(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    def boom() -> None:
        raise ImportError("no module named nowhere")

    ep = SimpleNamespace(name="broken", load=boom)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [ep])
    reg = MgmtDrivers()
    reg.load_entry_points()
    assert "broken" not in reg.factories
    assert "broken failed to load: no module named nowhere" in caplog.text
