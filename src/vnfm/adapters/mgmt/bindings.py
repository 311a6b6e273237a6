"""Binding of Vnflcm hooks to management drivers (the plug-in mechanics are in vnfm.adapters.plugins).

A package's VNFD says, per hook, which implementation runs it (e.g. `instantiate_end:
mgmt-drivers-kubernetes`), and that implementation is an artifact (a Python file in the reference
system). Python from a package is never executed here: the implementation *name* selects a driver
that ships with vnfm, or one installed as a Python entry point in the group `vnfm.mgmt_drivers`.
Operators can add bindings: VNFM_DRIVER_BINDINGS="my-artifact=kubeadm,other=noop".
"""

from __future__ import annotations

from collections.abc import Callable

from vnfm.adapters.plugins import DriverFactories
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import MgmtDriver

ENTRY_POINT_GROUP = "vnfm.mgmt_drivers"

# implementation / artifact name a package declares -> built-in driver name
DEFAULT_BINDINGS: dict[str, str] = {
    "mgmt-drivers-kubernetes": "kubeadm",
    "mgmt-drivers-kubespray": "kubespray",
    "mgmt-drivers-cnf-nodeport": "cnf-nodeport",
    "mgmt-drivers-noop": "noop",
    "mgmt-drivers-private-registry": "private-registry",
    "vnflcm_noop": "noop",
}
# former driver names, still accepted in VNFM_DRIVER_BINDINGS
ALIASES: dict[str, str] = {"kubernetes": "kubeadm"}


class MgmtDrivers:
    """Which management driver runs a hook: package implementation names bound to drivers."""

    def __init__(self, bindings: dict[str, str] | None = None) -> None:
        self.drivers: DriverFactories[MgmtDriver] = DriverFactories("management driver", ENTRY_POINT_GROUP)
        self.bindings = dict(DEFAULT_BINDINGS)
        self.bindings.update({k: ALIASES.get(v, v) for k, v in (bindings or {}).items()})

    @property
    def factories(self) -> dict[str, Callable[[], MgmtDriver]]:
        return self.drivers.factories

    @staticmethod
    def parse_bindings(text: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, driver = part.partition("=")
            if not sep or not name.strip() or not driver.strip():
                raise ValueError(f"driver binding {part!r} is not of the form implementation=driver")
            out[name.strip()] = driver.strip()
        return out

    def register(self, name: str, factory: Callable[[], MgmtDriver]) -> None:
        self.drivers.register(name, factory)

    def load_entry_points(self) -> None:
        self.drivers.load_entry_points()

    def driver(self, name: str) -> MgmtDriver:
        return self.drivers[ALIASES.get(name, name)]

    def resolve(self, flavour: Flavour, implementation: str) -> str:
        """The driver name for a hook's implementation (artifact name, then artifact file name)."""
        candidates = [implementation]
        artifact = flavour.artifacts.get(implementation)
        if artifact is not None:
            candidates.append(artifact.file.rsplit("/", 1)[-1])
        for cand in candidates:
            name = self.bindings.get(cand, cand)
            name = ALIASES.get(name, name)
            if name in self.factories:
                return name
        known = ", ".join(sorted(set(self.bindings) | set(self.factories)))
        raise UnprocessableEntity(
            f"no management driver is bound to implementation '{implementation}' used by flavour "
            f"'{flavour.id}' (package Python is never executed; known implementations: {known}; "
            "add a binding with VNFM_DRIVER_BINDINGS or install a driver in entry point group "
            f"'{ENTRY_POINT_GROUP}')"
        )

    def check(self, flavour: Flavour) -> None:
        for impl in set(flavour.hooks.values()):
            self.resolve(flavour, impl)

    def for_hook(self, flavour: Flavour, hook: str) -> MgmtDriver | None:
        """The driver bound to `hook`; for a hook the flavour leaves unbound, the driver bound to
        its other hooks when that driver lists `hook` in its `implicit_hooks` (a check that must run
        before resources are created, e.g. instantiate_start, although the VNFD binds only _end)."""
        impl = flavour.hooks.get(hook)
        if impl is not None:
            return self.driver(self.resolve(flavour, impl))
        for other in dict.fromkeys(flavour.hooks.values()):
            driver = self.driver(self.resolve(flavour, other))
            if hook in driver.implicit_hooks:
                return driver
        return None
