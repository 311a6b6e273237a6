from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity

from ..helpers import SIMPLE_DF, edit, example_files, parse_files


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
