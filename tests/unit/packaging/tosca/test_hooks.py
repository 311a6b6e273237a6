from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity

from ..helpers import SIMPLE_DF, edit, example_files, parse_files


def test_hook_naming_missing_artifact() -> None:
    files = edit(
        example_files(),
        SIMPLE_DF,
        "heal_end:\n            implementation: mgmt-drivers-kubernetes",
        "heal_end:\n            implementation: mgmt-drivers-ghost",
    )
    with pytest.raises(UnprocessableEntity, match="hook 'heal_end' names artifact 'mgmt-drivers-ghost'"):
        parse_files(files)


def test_artifact_file_missing() -> None:
    files = edit(example_files(), SIMPLE_DF, "file: Scripts/kubernetes_mgmt.py", "file: Scripts/ghost.py")
    with pytest.raises(UnprocessableEntity, match="artifact file 'Scripts/ghost.py' is not in the package"):
        parse_files(files)
