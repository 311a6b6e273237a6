"""One flavour's policies: scaling aspects, their per-VDU deltas, initial deltas and instantiation
levels (with their per-VDU instance counts), checked against each other and the VDUs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import InstantiationLevel, ScalingAspect, Vdu
from vnfm.packaging.tosca.types import Tree
from vnfm.packaging.tosca.values import as_int, mapping, policy_entries


@dataclass
class Policies:
    aspects: dict[str, ScalingAspect] = field(default_factory=dict)
    deltas: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    initial: dict[str, int] = field(default_factory=dict)
    levels: dict[str, InstantiationLevel] = field(default_factory=dict)
    default_level: str | None = None


@dataclass
class _Pending:
    """What can only be checked once every policy is read: (where, aspect, deltas, targets) of each
    VduScalingAspectDeltas, (where, levels, targets) of each VduInstantiationLevels."""

    deltas: list[tuple[str, str, dict[str, Any], list[str]]] = field(default_factory=list)
    vdu_levels: list[tuple[str, dict[str, Any], list[str]]] = field(default_factory=list)


def _targets(body: dict[str, Any], groups: dict[str, Any], vdus: dict[str, Vdu], where: str) -> list[str]:
    raw = body.get("targets") or []
    if not isinstance(raw, list):
        raise UnprocessableEntity(f"{where}: targets must be a list")
    out: list[str] = []
    for t in raw:
        if isinstance(t, list | dict):
            raise UnprocessableEntity(f"{where}: target {t!r} must name a VDU or a group")
        group = groups.get(t)
        members = group.get("members") if isinstance(group, dict) else None
        for name in members if isinstance(members, list) else [t]:
            if isinstance(name, list | dict) or name not in vdus:
                raise UnprocessableEntity(f"{where} targets unknown VDU {name!r}")
            out.append(str(name))
    return out


def _aspects(props: dict[str, Any], where: str) -> dict[str, ScalingAspect]:
    out: dict[str, ScalingAspect] = {}
    for aid, a in mapping(props.get("aspects"), f"{where} aspects").items():
        a = mapping(a, f"{where} aspect {aid!r}")
        steps = a.get("step_deltas") or []
        if not isinstance(steps, list):
            raise UnprocessableEntity(f"{where} aspect {aid!r}: step_deltas must be a list")
        out[str(aid)] = ScalingAspect(
            id=str(aid),
            name=str(a.get("name") or aid),
            description=str(a.get("description") or ""),
            max_scale_level=as_int(a.get("max_scale_level", 0), f"{where} aspect {aid!r} max_scale_level"),
            step_deltas=tuple(str(s) for s in steps),
        )
    return out


def _levels(props: dict[str, Any], where: str) -> dict[str, InstantiationLevel]:
    out: dict[str, InstantiationLevel] = {}
    for lid, lv in mapping(props.get("levels"), f"{where} levels").items():
        lv = mapping(lv, f"{where} level {lid!r}")
        scale: dict[str, int] = {}
        for aid, info in mapping(lv.get("scale_info"), f"{where} level {lid!r} scale_info").items():
            scale[str(aid)] = as_int(
                mapping(info, f"{where} scale_info {aid!r}").get("scale_level"),
                f"{where} level {lid!r} scale_level of {aid!r}",
            )
        out[str(lid)] = InstantiationLevel(
            id=str(lid), description=str(lv.get("description") or ""), scale_levels=scale
        )
    return out


def _read_policy(
    kind: str | None,
    body: dict[str, Any],
    where: str,
    groups: dict[str, Any],
    vdus: dict[str, Vdu],
    out: Policies,
    pending: _Pending,
) -> None:
    """Read one policy into `out`, or into `pending` what needs every policy read first."""
    props = mapping(body.get("properties"), f"{where} properties")
    if kind == "aspects":
        out.aspects.update(_aspects(props, where))
    elif kind == "deltas":
        aspect = props.get("aspect")
        if not isinstance(aspect, str):
            raise UnprocessableEntity(f"{where} has no aspect")
        dmap = mapping(props.get("deltas"), f"{where} deltas")
        pending.deltas.append((where, aspect, dmap, _targets(body, groups, vdus, where)))
    elif kind == "initial":
        n = as_int(
            mapping(props.get("initial_delta"), f"{where} initial_delta").get("number_of_instances"),
            f"{where} initial_delta.number_of_instances",
        )
        for t in _targets(body, groups, vdus, where):
            out.initial[t] = n
    elif kind == "levels":
        out.levels.update(_levels(props, where))
        if props.get("default_level") is not None:
            out.default_level = str(props["default_level"])
    elif kind == "vdu_levels":
        lmap = mapping(props.get("levels"), f"{where} levels")
        pending.vdu_levels.append((where, lmap, _targets(body, groups, vdus, where)))


def _apply_deltas(f: str, out: Policies, pending: _Pending) -> None:
    for where, aspect, dmap, targets in pending.deltas:
        if aspect not in out.aspects:
            raise UnprocessableEntity(f"{where} names unknown aspect {aspect!r}")
        for did, d in dmap.items():
            n = as_int(
                mapping(d, f"{where} delta {did!r}").get("number_of_instances"),
                f"{where} delta {did!r} number_of_instances",
            )
            slot = out.deltas.setdefault(aspect, {}).setdefault(str(did), {})
            for t in targets:
                slot[t] = n
    for aid, a in out.aspects.items():
        defined = out.deltas.get(aid)
        if defined:
            for step in a.step_deltas:
                if step not in defined:
                    raise UnprocessableEntity(
                        f"{f}: aspect {aid!r} step delta {step!r} is not defined for any VDU"
                    )


def _apply_levels(f: str, out: Policies, pending: _Pending) -> None:
    for lid, lv in out.levels.items():
        for aid, sl in lv.scale_levels.items():
            if aid not in out.aspects:
                raise UnprocessableEntity(f"{f}: instantiation level {lid!r} names unknown aspect {aid!r}")
            if sl > out.aspects[aid].max_scale_level:
                raise UnprocessableEntity(
                    f"{f}: instantiation level {lid!r} puts aspect {aid!r} at scale level {sl}, over its "
                    f"max_scale_level {out.aspects[aid].max_scale_level}"
                )
    for where, lmap, targets in pending.vdu_levels:
        for lid, spec in lmap.items():
            if lid not in out.levels:
                raise UnprocessableEntity(f"{where} names unknown instantiation level {lid!r}")
            n = as_int(
                mapping(spec, f"{where} level {lid!r}").get("number_of_instances"),
                f"{where} level {lid!r} number_of_instances",
            )
            for t in targets:
                out.levels[lid].vdu_counts[t] = n
    if out.default_level is not None and out.default_level not in out.levels:
        raise UnprocessableEntity(f"{f}: default_level {out.default_level!r} is not an instantiation level")


def parse_policies(tree: Tree, f: str, tt: dict[str, Any], vdus: dict[str, Vdu]) -> Policies:
    """The policies of the flavour written in file `f` (topology template `tt`)."""
    groups = mapping(tt.get("groups"), f"{f}: groups")
    out = Policies()
    pending = _Pending()
    for pname, body in policy_entries(tt, f):
        where = f"{f}: policy {pname!r}"
        _read_policy(tree.policy_kind(body["type"]), body, where, groups, vdus, out, pending)
    _apply_deltas(f, out, pending)
    _apply_levels(f, out, pending)
    return out
