from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity
from vnfm.packaging.tosca.values import as_int, mapping, policy_entries, requirements, resolve, size_bytes


def test_resolve_reads_get_input_defaults_only() -> None:
    inputs = {"a": {"type": "string", "default": "x"}, "b": {"type": "string"}}
    assert resolve({"get_input": "a"}, inputs) == "x"
    assert resolve({"get_input": "b"}, inputs) is None
    assert resolve({"get_input": "missing"}, inputs) is None
    assert resolve({"concat": ["a", "b"]}, inputs) is None
    assert resolve("literal", inputs) == "literal"
    assert resolve({"not": "a function", "two": "keys"}, inputs) == {"not": "a function", "two": "keys"}


def test_size_bytes_binary_by_default_si_on_request() -> None:
    assert size_bytes("512 MB", "w") == 512 * 1024**2
    assert size_bytes("4 GiB", "w") == 4 * 1024**3
    assert size_bytes("2 GB", "w", si=True) == 2_000_000_000
    assert size_bytes("2 GiB", "w", si=True) == 2 * 1024**3
    assert size_bytes("1.5 kB", "w") == 1536
    for bad in ("512", "2 XB", 512, None):
        with pytest.raises(UnprocessableEntity, match=r"^f.yaml: size must be a size with a unit"):
            size_bytes(bad, "f.yaml: size")


def test_as_int_and_mapping_name_the_key() -> None:
    assert as_int(3, "w") == 3
    assert as_int(1, "w", 1) == 1
    for bad in (True, "3", -1, 1.0):
        with pytest.raises(UnprocessableEntity, match=r"^f.yaml: order must be an integer >= 0, got "):
            as_int(bad, "f.yaml: order")
    with pytest.raises(UnprocessableEntity, match=r"must be an integer >= 1, got 0"):
        as_int(0, "w", 1)
    assert mapping(None, "w") == {}
    with pytest.raises(UnprocessableEntity, match=r"^f.yaml: inputs must be a mapping$"):
        mapping([1], "f.yaml: inputs")


def test_requirements_as_list_or_mapping() -> None:
    tmpl = {"requirements": [{"virtual_binding": "VDU1"}, {"virtual_link": {"node": "VL1"}}]}
    assert requirements(tmpl, "w") == [("virtual_binding", "VDU1"), ("virtual_link", "VL1")]
    assert requirements({"requirements": {"virtual_binding": "VDU1"}}, "w") == [("virtual_binding", "VDU1")]
    with pytest.raises(UnprocessableEntity, match="requirement 'virtual_link' must name a node template"):
        requirements({"requirements": [{"virtual_link": {"capability": "x"}}]}, "w")


def test_policy_entries_as_list_or_mapping() -> None:
    body = {"type": "tosca.policies.nfv.ScalingAspects"}
    assert policy_entries({"policies": [{"p": body}]}, "w") == [("p", body)]
    assert policy_entries({"policies": {"p": body}}, "w") == [("p", body)]
    with pytest.raises(UnprocessableEntity, match="f.yaml: policy 'p' has no type"):
        policy_entries({"policies": {"p": {}}}, "f.yaml")
    with pytest.raises(UnprocessableEntity, match="f.yaml: policies must be a list"):
        policy_entries({"policies": "p"}, "f.yaml")
