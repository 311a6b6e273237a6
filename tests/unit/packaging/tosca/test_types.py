from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity

from ..helpers import SIMPLE_DF, TOP, edit, example_files, parse_files


def test_import_escaping_the_package() -> None:
    files = edit(example_files(), TOP, "- sample_kubernetes_types.yaml", "- ../../etc/evil.yaml")
    with pytest.raises(UnprocessableEntity, match=f"{TOP}: import '../../etc/evil.yaml' escapes the package"):
        parse_files(files)


def test_import_absolute_or_missing() -> None:
    files = edit(example_files(), TOP, "- sample_kubernetes_types.yaml", "- /etc/evil.yaml")
    with pytest.raises(UnprocessableEntity, match="escapes the package"):
        parse_files(files)
    files = edit(example_files(), TOP, "- sample_kubernetes_types.yaml", "- missing_types.yaml")
    with pytest.raises(UnprocessableEntity, match="import 'missing_types.yaml' .* is not in the package"):
        parse_files(files)


def test_unknown_node_type() -> None:
    files = edit(example_files(), SIMPLE_DF, "type: tosca.nodes.nfv.VduCp", "type: company.nodes.Ghost")
    with pytest.raises(UnprocessableEntity, match="has type 'company.nodes.Ghost', which no imported file"):
        parse_files(files)
