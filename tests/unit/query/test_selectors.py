"""SOL013 5.3 attribute selectors and the whole list query."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vnfm.domain.errors import BadRequest
from vnfm.entrypoints.api.query import (
    VNF_INSTANCE_DEFAULT_EXCLUDED,
    VNF_PKG_INFO_DEFAULT_EXCLUDED,
    ListParams,
    apply_selectors,
    parse_field_list,
    parse_list_params,
)

PKG: dict[str, Any] = {
    "id": "p1",
    "vnfdId": "vnfd-1",
    "onboardingState": "ONBOARDED",
    "checksum": {"algorithm": "SHA-512", "hash": "h"},
    "softwareImages": [
        {"id": "img1", "name": "ubuntu", "checksum": {"algorithm": "sha-256", "hash": "a"}},
        {"id": "img2", "name": "cirros", "checksum": {"algorithm": "sha-256", "hash": "b"}},
    ],
    "additionalArtifacts": [{"artifactPath": "Scripts/install.sh"}],
    "userDefinedData": {"owner": "ops", "zone": "z1"},
    "_links": {"self": {"href": "/vnfpkgm/v1/vnf_packages/p1"}},
}

INSTANCE: dict[str, Any] = {
    "id": "i1",
    "vnfInstanceName": "vnf",
    "instantiationState": "INSTANTIATED",
    "vnfConfigurableProperties": {"isAutoscaleEnabled": False},
    "instantiatedVnfInfo": {"flavourId": "simple", "vnfState": "STARTED", "scaleStatus": [{"aspectId": "w"}]},
    "metadata": {"k": "v"},
    "extensions": {"e": 1},
    "vimConnectionInfo": [{"id": "vim1", "vimType": "openstack", "accessInfo": {"region": "R1"}}],
}

PKG_DEFAULT = list(VNF_PKG_INFO_DEFAULT_EXCLUDED)
INST_DEFAULT = list(VNF_INSTANCE_DEFAULT_EXCLUDED)


def test_no_selector_removes_default_excluded() -> None:
    out = apply_selectors(PKG, default_excluded=PKG_DEFAULT)
    assert set(out) == {"id", "vnfdId", "onboardingState", "_links"}
    out = apply_selectors(INSTANCE, default_excluded=INST_DEFAULT)
    assert set(out) == {"id", "vnfInstanceName", "instantiationState"}


def test_exclude_default_is_the_same_as_none() -> None:
    assert apply_selectors(PKG, exclude_default=True, default_excluded=PKG_DEFAULT) == apply_selectors(
        PKG, default_excluded=PKG_DEFAULT
    )


def test_all_fields_returns_everything_as_a_copy() -> None:
    out = apply_selectors(PKG, all_fields=True, default_excluded=PKG_DEFAULT)
    assert out == PKG
    out["softwareImages"][0]["name"] = "changed"
    assert PKG["softwareImages"][0]["name"] == "ubuntu"


def test_fields_adds_to_the_default_view() -> None:
    out = apply_selectors(PKG, fields=["softwareImages", "checksum"], default_excluded=PKG_DEFAULT)
    assert set(out) == {"id", "vnfdId", "onboardingState", "_links", "softwareImages", "checksum"}
    assert out["softwareImages"] == PKG["softwareImages"]


def test_fields_with_exclude_default_is_allowed() -> None:
    out = apply_selectors(PKG, fields=["userDefinedData"], exclude_default=True, default_excluded=PKG_DEFAULT)
    assert out["userDefinedData"] == {"owner": "ops", "zone": "z1"}
    assert "softwareImages" not in out


def test_nested_field_adds_only_that_part() -> None:
    out = apply_selectors(INSTANCE, fields=["instantiatedVnfInfo/vnfState"], default_excluded=INST_DEFAULT)
    assert out["instantiatedVnfInfo"] == {"vnfState": "STARTED"}
    out = apply_selectors(PKG, fields=["userDefinedData/zone", "userDefinedData/nope"], default_excluded=PKG_DEFAULT)
    assert out["userDefinedData"] == {"zone": "z1"}


def test_nested_field_through_array() -> None:
    out = apply_selectors(
        PKG, fields=["softwareImages/name", "softwareImages/checksum/hash"], default_excluded=PKG_DEFAULT
    )
    assert out["softwareImages"] == [
        {"name": "ubuntu", "checksum": {"hash": "a"}},
        {"name": "cirros", "checksum": {"hash": "b"}},
    ]


def test_fields_naming_absent_attribute_is_ignored() -> None:
    out = apply_selectors(PKG, fields=["doesNotExist", "doesNot/exist"], default_excluded=PKG_DEFAULT)
    assert out == apply_selectors(PKG, default_excluded=PKG_DEFAULT)


def test_exclude_fields_removes_only_those() -> None:
    out = apply_selectors(PKG, exclude_fields=["softwareImages", "_links"], default_excluded=PKG_DEFAULT)
    assert "softwareImages" not in out and "_links" not in out
    assert out["userDefinedData"] == PKG["userDefinedData"]  # default-excluded ones stay
    assert out["checksum"] == PKG["checksum"]


def test_exclude_nested_fields_through_arrays() -> None:
    out = apply_selectors(
        PKG, exclude_fields=["softwareImages/checksum", "userDefinedData/owner"], default_excluded=PKG_DEFAULT
    )
    assert out["softwareImages"] == [{"id": "img1", "name": "ubuntu"}, {"id": "img2", "name": "cirros"}]
    assert out["userDefinedData"] == {"zone": "z1"}
    out = apply_selectors(INSTANCE, exclude_fields=["vimConnectionInfo/accessInfo"], default_excluded=INST_DEFAULT)
    assert out["vimConnectionInfo"] == [{"id": "vim1", "vimType": "openstack"}]


def test_input_document_is_never_modified() -> None:
    before = copy.deepcopy(PKG)
    apply_selectors(PKG, exclude_fields=["softwareImages/checksum"], default_excluded=PKG_DEFAULT)
    apply_selectors(PKG, fields=["softwareImages/name"], default_excluded=PKG_DEFAULT)
    apply_selectors(PKG, default_excluded=PKG_DEFAULT)
    assert before == PKG


def test_nested_default_excluded() -> None:
    doc = {"id": "o1", "operationParams": {"a": 1}, "nested": {"keep": 1, "drop": [1, 2]}}
    out = apply_selectors(doc, default_excluded=["operationParams", "nested/drop"])
    assert out == {"id": "o1", "nested": {"keep": 1}}
    out = apply_selectors(doc, fields=["nested/drop"], default_excluded=["operationParams", "nested/drop"])
    assert out == {"id": "o1", "nested": {"keep": 1, "drop": [1, 2]}}


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"all_fields": True, "fields": ["a"]}, "'all_fields' cannot be combined with 'fields'"),
        ({"all_fields": True, "exclude_fields": ["a"]}, "'all_fields' cannot be combined with 'exclude_fields'"),
        ({"all_fields": True, "exclude_default": True}, "'all_fields' cannot be combined with 'exclude_default'"),
        ({"fields": ["a"], "exclude_fields": ["b"]}, "'fields' and 'exclude_fields' cannot be combined"),
        ({"exclude_fields": ["a"], "exclude_default": True}, "'exclude_fields' and 'exclude_default'"),
        ({"fields": ["a//b"]}, "invalid attribute path 'a//b'"),
        ({"exclude_fields": [""]}, "invalid attribute path ''"),
    ],
)
def test_forbidden_combinations(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(BadRequest) as info:
        apply_selectors(PKG, default_excluded=PKG_DEFAULT, **kwargs)
    assert fragment in info.value.detail


def test_parse_field_list() -> None:
    assert parse_field_list("a,b/c") == ["a", "b/c"]
    for bad in ("", "a,,b", "a,", "a/", "/a"):
        with pytest.raises(BadRequest):
            parse_field_list(bad)


# ----------------------------------------------------------------------------- parse_list_params
def test_list_params_empty_query() -> None:
    p = parse_list_params({})
    assert p == ListParams()
    assert p.apply([PKG], PKG_DEFAULT) == [apply_selectors(PKG, default_excluded=PKG_DEFAULT)]


def test_list_params_full() -> None:
    p = parse_list_params(
        {"filter": "(eq,softwareImages/name,cirros)", "fields": "softwareImages/name", "exclude_default": ""}
    )
    assert p.exclude_default and p.fields == ("softwareImages/name",) and p.filter is not None
    other = {**PKG, "id": "p2", "softwareImages": [{"name": "x"}]}
    out = p.apply([PKG, other], PKG_DEFAULT)
    assert [d["id"] for d in out] == ["p1"]
    assert out[0]["softwareImages"] == [{"name": "ubuntu"}, {"name": "cirros"}]


def test_list_params_flags() -> None:
    assert parse_list_params({"all_fields": ""}).all_fields
    assert parse_list_params({"all_fields": "true"}).all_fields
    assert not parse_list_params({"all_fields": "false"}).all_fields
    assert parse_list_params({"nextpage_opaque_marker": "abc"}).nextpage_opaque_marker == "abc"


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ({"filter": ""}, "invalid filter: the expression is empty"),
        ({"filter": "(eq,a,1"}, "invalid filter"),
        ({"fields": ""}, "'fields' needs a comma-separated list"),
        ({"exclude_fields": ""}, "'exclude_fields' needs"),
        ({"fields": "a,,b"}, "empty attribute name"),
        ({"all_fields": "yes"}, "'all_fields' takes no value"),
        ({"exclude_default": "1"}, "'exclude_default' takes no value"),
        ({"all_fields": "", "fields": "a"}, "cannot be combined"),
        ({"all_fields": "", "exclude_default": ""}, "cannot be combined"),
        ({"fields": "a", "exclude_fields": "b"}, "cannot be combined"),
        ({"exclude_fields": "a", "exclude_default": ""}, "cannot be combined"),
        ({"sort": "id"}, "unknown query parameter 'sort'"),
        ({"nextpage_opaque_marker": ""}, "'nextpage_opaque_marker' is empty"),
    ],
)
def test_list_params_errors(query: dict[str, str], fragment: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse_list_params(query)
    assert fragment in info.value.detail


def test_list_params_lenient_and_no_selectors() -> None:
    assert parse_list_params({"sort": "id"}, strict=False) == ListParams()
    assert parse_list_params({"page": "2"}, extra_allowed=["page"]) == ListParams()
    with pytest.raises(BadRequest, match="does not support the attribute selector 'fields'"):
        parse_list_params({"fields": "a"}, selectors=False)
    assert parse_list_params({"filter": "(eq,id,1)"}, selectors=False).filter is not None


class _MultiDict(dict[str, str]):
    """Like Starlette's QueryParams: remembers repeated keys."""

    def __init__(self, items: list[tuple[str, str]]) -> None:
        super().__init__(items)
        self._items = items

    def getlist(self, key: str) -> list[str]:
        return [v for k, v in self._items if k == key]


def test_list_params_rejects_repeated_parameter() -> None:
    q = _MultiDict([("filter", "(eq,id,1)"), ("filter", "(eq,id,2)")])
    with pytest.raises(BadRequest, match="more than once"):
        parse_list_params(q)
    assert parse_list_params(_MultiDict([("filter", "(eq,id,1)")])).filter is not None


@pytest.mark.parametrize("params", [
    {}, {"all_fields": True}, {"fields": ("b/c",)}, {"exclude_fields": ("a", "b/c")}, {"exclude_default": True},
    {"exclude_default": True, "fields": ("b",)},
])
def test_selectors_on_an_owned_document_give_the_same_result_and_spare_the_original(params: dict) -> None:
    def doc() -> dict:
        return {"id": "x", "a": {"k": [1, 2]}, "b": {"c": 1, "d": {"e": 2}}, "z": [{"c": 3, "y": 4}]}

    owned = doc()
    expected = apply_selectors(doc(), default_excluded=("b", "z/y"), **params)
    assert apply_selectors(owned, default_excluded=("b", "z/y"), owned=True, **params) == expected
    assert owned == doc()  # nested removals worked on copies
