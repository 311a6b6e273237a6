from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity

from ..helpers import SIMPLE_DF, SINGLE_VNFD, edit, example_files, parse_files, single_files


def test_policy_targeting_unknown_vdu() -> None:
    files = edit(example_files(), SIMPLE_DF, "targets: [ workerNode ]", "targets: [ ghostNode ]")
    with pytest.raises(UnprocessableEntity, match="targets unknown VDU 'ghostNode'"):
        parse_files(files)


def test_aspect_delta_naming_unknown_aspect() -> None:
    files = edit(example_files(), SIMPLE_DF, "aspect: worker_instance", "aspect: ghost_instance")
    with pytest.raises(UnprocessableEntity, match="names unknown aspect 'ghost_instance'"):
        parse_files(files)


def test_level_over_max_scale_level() -> None:
    files = edit(
        example_files(),
        SIMPLE_DF,
        "worker_instance:\n                  scale_level: 2",
        "worker_instance:\n                  scale_level: 9",
    )
    with pytest.raises(UnprocessableEntity, match="over its max_scale_level 4"):
        parse_files(files)


@pytest.mark.parametrize("targets", ["[ [workerNode] ]", "[ {workerNode: 1} ]"])
def test_policy_target_that_is_not_a_name(targets: str) -> None:
    # Before: TypeError (unhashable) out of the parser, so the upload answered 500, not 422.
    files = edit(example_files(), SIMPLE_DF, "targets: [ workerNode ]", f"targets: {targets}")
    with pytest.raises(UnprocessableEntity, match=r"policy 'workerNode_\w+': target .* must name a VDU or a group"):
        parse_files(files)


def test_policy_group_member_that_is_not_a_name() -> None:
    vnfd = SINGLE_VNFD.replace("targets: [VDU1]", "targets: [g1]") + "  groups:\n    g1: {members: [[VDU1]]}\n"
    with pytest.raises(UnprocessableEntity, match=r"policy 'deltas' targets unknown VDU \['VDU1'\]"):
        parse_files(single_files(vnfd))


def test_policy_targeting_a_group() -> None:
    vnfd = SINGLE_VNFD.replace("targets: [VDU1]", "targets: [g1]") + "  groups:\n    g1: {members: [VDU1]}\n"
    assert parse_files(single_files(vnfd)).flavour("only").aspect_deltas == {"vdu1_aspect": {"d1": {"VDU1": 1}}}
