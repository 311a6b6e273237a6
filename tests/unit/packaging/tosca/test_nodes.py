from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity

from ..helpers import SIMPLE_DF, edit, example_files, parse_files


def test_cp_bound_to_unknown_vdu() -> None:
    files = edit(example_files(), SIMPLE_DF, "- virtual_binding: workerNode", "- virtual_binding: ghostNode")
    with pytest.raises(UnprocessableEntity, match="CP 'workerNode_CP2' is bound to unknown VDU 'ghostNode'"):
        parse_files(files)
