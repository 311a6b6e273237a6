"""How many VNFCs each VDU has, from instantiation levels, initial deltas and scale levels (SOL001)."""

from __future__ import annotations

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Flavour


def initial_scale_levels(flavour: Flavour, level_id: str | None) -> dict[str, int]:
    """Scale level of every aspect right after instantiation."""
    levels = {a: 0 for a in flavour.aspects}
    chosen = level_id or flavour.default_level
    if chosen:
        levels.update(flavour.level(chosen).scale_levels)
    return levels


def base_counts(flavour: Flavour, level_id: str | None) -> dict[str, int]:
    """VNFCs per VDU at scale level 0 of every aspect (instantiation level or initial delta)."""
    chosen = level_id or flavour.default_level
    counts: dict[str, int] = {}
    for vdu_id, vdu in flavour.vdus.items():
        if vdu_id in flavour.initial_deltas:
            counts[vdu_id] = flavour.initial_deltas[vdu_id]
        else:
            counts[vdu_id] = vdu.min_instances
    if chosen:
        level = flavour.level(chosen)
        # An instantiation level gives absolute counts; those include its aspects' scale levels.
        for vdu_id, n in level.vdu_counts.items():
            counts[vdu_id] = n - _scaled_extra(flavour, vdu_id, level.scale_levels)
    return counts


def _step_delta(flavour: Flavour, aspect_id: str, step: int) -> dict[str, int]:
    aspect = flavour.aspect(aspect_id)
    deltas = flavour.aspect_deltas.get(aspect_id, {})
    if not aspect.step_deltas:
        # No step_deltas listed: a single delta (if any) applies uniformly.
        return next(iter(deltas.values()), {})
    delta_id = aspect.step_deltas[min(step, len(aspect.step_deltas)) - 1]
    return deltas.get(delta_id, {})


def _scaled_extra(flavour: Flavour, vdu_id: str, scale_levels: dict[str, int]) -> int:
    extra = 0
    for aspect_id, level in scale_levels.items():
        if aspect_id not in flavour.aspects:
            continue
        for step in range(1, level + 1):
            extra += _step_delta(flavour, aspect_id, step).get(vdu_id, 0)
    return extra


def target_counts(flavour: Flavour, level_id: str | None, scale_levels: dict[str, int]) -> dict[str, int]:
    """VNFCs per VDU for the given scale levels, checked against vdu_profile limits."""
    base = base_counts(flavour, level_id)
    counts = {vdu_id: n + _scaled_extra(flavour, vdu_id, scale_levels) for vdu_id, n in base.items()}
    for vdu_id, n in counts.items():
        vdu = flavour.vdus[vdu_id]
        if n < vdu.min_instances or n > vdu.max_instances:
            raise UnprocessableEntity(
                f"VDU '{vdu_id}' would have {n} instances, outside its vdu_profile "
                f"[{vdu.min_instances}, {vdu.max_instances}]"
            )
    return counts


def scaled_levels(
    flavour: Flavour, current: dict[str, int], aspect_id: str, steps: int, scale_out: bool
) -> dict[str, int]:
    """New scale levels after scaling `aspect_id` by `steps`; rejects going past 0 or max."""
    aspect = flavour.aspect(aspect_id)
    if steps < 1:
        raise UnprocessableEntity(f"numberOfSteps must be a positive integer, got {steps}")
    level = current.get(aspect_id, 0)
    new = level + steps if scale_out else level - steps
    if new > aspect.max_scale_level:
        raise UnprocessableEntity(
            f"scaling aspect '{aspect_id}' out by {steps} step(s) from level {level} exceeds "
            f"max_scale_level {aspect.max_scale_level}"
        )
    if new < 0:
        raise UnprocessableEntity(
            f"scaling aspect '{aspect_id}' in by {steps} step(s) from level {level} goes below level 0"
        )
    out = dict(current)
    out[aspect_id] = new
    return out


def check_counts(flavour: Flavour, counts: dict[str, int]) -> None:
    """Counts an infrastructure driver is asked for name only VDUs of the flavour, none negative."""
    unknown = sorted(set(counts) - set(flavour.vdus))
    if unknown:
        raise UnprocessableEntity(
            f"VDU(s) {', '.join(unknown)} are not defined in flavour '{flavour.id}' "
            f"(known: {', '.join(sorted(flavour.vdus)) or 'none'})"
        )
    negative = sorted(v for v, n in counts.items() if n < 0)
    if negative:
        raise UnprocessableEntity(f"negative VNFC count for VDU(s) {', '.join(negative)}")
