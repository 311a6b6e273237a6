"""The parsed VNFD (ETSI SOL001), reduced to what lifecycle management needs.

The CSAR/TOSCA parser (vnfm.packaging) builds these objects; everything else reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vnfm.domain.errors import UnprocessableEntity

# The Vnflcm interface operations of SOL001 (tosca.interfaces.nfv.Vnflcm) that drivers can hook.
LCM_HOOKS: tuple[str, ...] = (
    "instantiate_start",
    "instantiate_end",
    "terminate_start",
    "terminate_end",
    "scale_start",
    "scale_end",
    "heal_start",
    "heal_end",
    "change_external_connectivity_start",
    "change_external_connectivity_end",
    "modify_information_start",
    "modify_information_end",
)


@dataclass(frozen=True)
class Artifact:
    name: str
    type: str
    file: str
    description: str = ""


@dataclass(frozen=True)
class VirtualStorage:
    id: str
    type_of_storage: str = "BLOCK"
    size_gb: float | None = None
    image: str | None = None


@dataclass(frozen=True)
class Vdu:
    id: str
    name: str
    description: str = ""
    min_instances: int = 1
    max_instances: int = 1
    storages: tuple[str, ...] = ()
    sw_image: str | None = None
    num_cpus: int | None = None
    memory_mb: int | None = None


@dataclass(frozen=True)
class Cp:
    """A VduCp. `virtual_link` is an internal VL id, or None for an external CP."""

    id: str
    vdu_id: str
    virtual_link: str | None = None
    layer_protocols: tuple[str, ...] = ("ipv4",)
    order: int = 0


@dataclass(frozen=True)
class VirtualLink:
    id: str
    description: str = ""
    layer_protocols: tuple[str, ...] = ("ipv4",)
    cidr: str | None = None


@dataclass(frozen=True)
class ScalingAspect:
    id: str
    name: str = ""
    description: str = ""
    max_scale_level: int = 0
    step_deltas: tuple[str, ...] = ()


@dataclass(frozen=True)
class InstantiationLevel:
    id: str
    description: str = ""
    scale_levels: dict[str, int] = field(default_factory=dict)  # aspect id -> scale level
    vdu_counts: dict[str, int] = field(default_factory=dict)  # vdu id -> number of instances


@dataclass(frozen=True)
class Flavour:
    id: str
    description: str = ""
    vdus: dict[str, Vdu] = field(default_factory=dict)
    cps: dict[str, Cp] = field(default_factory=dict)
    virtual_links: dict[str, VirtualLink] = field(default_factory=dict)
    storages: dict[str, VirtualStorage] = field(default_factory=dict)
    aspects: dict[str, ScalingAspect] = field(default_factory=dict)
    # aspect id -> delta id -> vdu id -> number of instances added per step
    aspect_deltas: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    initial_deltas: dict[str, int] = field(default_factory=dict)  # vdu id -> instances
    instantiation_levels: dict[str, InstantiationLevel] = field(default_factory=dict)
    default_level: str | None = None
    hooks: dict[str, str] = field(default_factory=dict)  # Vnflcm hook -> artifact/implementation name
    artifacts: dict[str, Artifact] = field(default_factory=dict)

    # -- lookups that raise domain errors naming the bad id ------------------------------------
    def aspect(self, aspect_id: str) -> ScalingAspect:
        try:
            return self.aspects[aspect_id]
        except KeyError:
            known = ", ".join(sorted(self.aspects)) or "none"
            raise UnprocessableEntity(
                f"aspectId '{aspect_id}' is not defined in flavour '{self.id}' (known: {known})"
            ) from None

    def level(self, level_id: str) -> InstantiationLevel:
        try:
            return self.instantiation_levels[level_id]
        except KeyError:
            known = ", ".join(sorted(self.instantiation_levels)) or "none"
            raise UnprocessableEntity(
                f"instantiationLevelId '{level_id}' is not defined in flavour '{self.id}' (known: {known})"
            ) from None

    def cps_of(self, vdu_id: str) -> list[Cp]:
        return sorted((c for c in self.cps.values() if c.vdu_id == vdu_id), key=lambda c: (c.order, c.id))


@dataclass(frozen=True)
class Vnfd:
    id: str
    version: str
    provider: str
    product_name: str
    software_version: str
    product_info_name: str = ""
    flavours: dict[str, Flavour] = field(default_factory=dict)

    def flavour(self, flavour_id: str) -> Flavour:
        try:
            return self.flavours[flavour_id]
        except KeyError:
            known = ", ".join(sorted(self.flavours)) or "none"
            raise UnprocessableEntity(
                f"flavourId '{flavour_id}' is not defined in VNFD '{self.id}' (known: {known})"
            ) from None
