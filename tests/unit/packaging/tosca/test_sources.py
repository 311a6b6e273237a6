from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity

from ..helpers import SIMPLE_DF, TOP, edit, example_files, parse_files

HA_DF = "Definitions/sample_kubernetes_df_ha.yaml"


def test_flavour_defined_twice() -> None:
    files = edit(example_files(), HA_DF, "flavour_id: ha", "flavour_id: simple")
    with pytest.raises(
        UnprocessableEntity,
        match=f"flavour 'simple' is defined twice \\({SIMPLE_DF} and {HA_DF}\\)",
    ):
        parse_files(files)


def test_flavour_without_id() -> None:
    files = edit(example_files(), HA_DF, "flavour_id: ha", "flavour_id: { get_input: flavour_id }")
    with pytest.raises(UnprocessableEntity, match=f"{HA_DF}: cannot tell the flavour id"):
        parse_files(files)


def test_vnf_property_from_input_default() -> None:
    files = edit(
        example_files(),
        TOP,
        "provider: Company",
        "provider: { get_input: who }",
    )
    files = edit(files, TOP, "  inputs:\n", "  inputs:\n    who:\n      type: string\n      default: Someone\n")
    assert parse_files(files).provider == "Someone"


def test_two_vnf_node_templates_in_one_file() -> None:
    files = edit(
        example_files(),
        TOP,
        "  node_templates:\n",
        "  node_templates:\n    VNF2:\n      type: company.provider.K8sClusterVNF\n",
    )
    with pytest.raises(UnprocessableEntity, match=f"{TOP}: more than one VNF node template \\(VNF2, VNF\\)"):
        parse_files(files)


@pytest.mark.parametrize("constraints", ["7", "true"])
def test_vnf_type_property_constraints_not_a_list(constraints: str) -> None:
    # Before: TypeError ('int' object is not iterable) out of the parser: a 500 on upload.
    types = "Definitions/sample_kubernetes_types.yaml"
    files = edit(
        example_files(),
        types,
        "    properties:\n",
        f"    properties:\n      product_info_name:\n        type: string\n        constraints: {constraints}\n",
    )
    with pytest.raises(
        UnprocessableEntity,
        match=f"{types}: node type company.provider.K8sClusterVNF property 'product_info_name' constraints "
        "must be a list",
    ):
        parse_files(files)
