from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity

from ..helpers import SIMPLE_DF, SINGLE_VNFD, edit, example_files, parse_files, single_files


def test_cp_bound_to_unknown_vdu() -> None:
    files = edit(example_files(), SIMPLE_DF, "- virtual_binding: workerNode", "- virtual_binding: ghostNode")
    with pytest.raises(UnprocessableEntity, match="CP 'workerNode_CP2' is bound to unknown VDU 'ghostNode'"):
        parse_files(files)


@pytest.mark.parametrize("value", ["7", "true", "ipv4"])
def test_virtual_link_protocol_data_not_a_list(value: str) -> None:
    # Before: TypeError ('int' object is not iterable) out of the parser for 7 and true: a 500.
    vnfd = SINGLE_VNFD.replace(
        "virtual_link_protocol_data:\n            - layer_protocol: ipv4\n"
        "              l3_protocol_data: {ip_version: ipv4, cidr: 10.0.0.0/24}",
        f"virtual_link_protocol_data: {value}",
    )
    assert vnfd != SINGLE_VNFD
    with pytest.raises(
        UnprocessableEntity, match="node template 'VL1' virtual_link_protocol_data must be a list"
    ):
        parse_files(single_files(vnfd))
