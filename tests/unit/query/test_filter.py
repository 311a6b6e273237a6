"""SOL013 5.2 attribute-based filtering."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.domain.errors import BadRequest
from vnfm.entrypoints.api.query import Filter, Term, parse_filter, values_at

PKG: dict[str, Any] = {
    "id": "p1",
    "vnfdId": "vnfd-1",
    "vnfProvider": "Company",
    "vnfProductName": "Sample VNF",
    "onboardingState": "ONBOARDED",
    "operationalState": "ENABLED",
    "softwareImages": [
        {"name": "ubuntu", "size": 2000, "checksum": {"algorithm": "sha-256", "hash": "abc"}},
        {"name": "cirros", "size": 12, "checksum": {"algorithm": "sha-512", "hash": "def"}},
    ],
    "userDefinedData": {"key": "a,b;c(d)'e", "enabled": True, "weight": 100, "ratio": 0.5},
    "matrix": [[{"v": 1}, {"v": 2}], [{"v": 3}]],
    "tags": ["red", "green"],
    "nothing": None,
}

INSTANCE: dict[str, Any] = {
    "id": "i1",
    "vnfInstanceName": "my vnf",
    "instantiationState": "INSTANTIATED",
    "instantiatedVnfInfo": {
        "vnfState": "STARTED",
        "scaleStatus": [{"aspectId": "worker", "scaleLevel": 2}, {"aspectId": "master", "scaleLevel": 0}],
        "vnfcResourceInfo": [
            {"vduId": "masterNode", "vnfcCpInfo": [{"cpdId": "CP1"}, {"cpdId": "CP2"}]},
            {"vduId": "workerNode", "vnfcCpInfo": [{"cpdId": "CP3"}]},
        ],
    },
    "createdAt": "2024-05-01T10:00:00Z",
}


@pytest.mark.parametrize(
    ("expr", "doc", "expected"),
    [
        ("(eq,id,p1)", PKG, True),
        ("(eq,id,p2)", PKG, False),
        ("(neq,id,p2)", PKG, True),
        ("(neq,id,p1)", PKG, False),
        ("(in,onboardingState,CREATED,ONBOARDED)", PKG, True),
        ("(in,onboardingState,CREATED,PROCESSING)", PKG, False),
        ("(nin,onboardingState,CREATED,PROCESSING)", PKG, True),
        ("(nin,onboardingState,CREATED,ONBOARDED)", PKG, False),
        ("(cont,vnfProductName,Sample)", PKG, True),
        ("(cont,vnfProductName,nope,ample)", PKG, True),
        ("(cont,vnfProductName,sample)", PKG, False),  # case-sensitive
        ("(ncont,vnfProductName,nope,zzz)", PKG, True),
        ("(ncont,vnfProductName,nope,VNF)", PKG, False),
        # AND of terms
        ("(eq,id,p1);(eq,operationalState,ENABLED)", PKG, True),
        ("(eq,id,p1);(eq,operationalState,DISABLED)", PKG, False),
        # nested objects
        ("(eq,instantiatedVnfInfo/vnfState,STARTED)", INSTANCE, True),
        ("(eq,instantiatedVnfInfo/vnfState,STOPPED)", INSTANCE, False),
        ("(eq,instantiatedVnfInfo/missing,STARTED)", INSTANCE, False),
        ("(eq,missing/deeper/still,x)", INSTANCE, False),
        # arrays on the path: any element
        ("(eq,softwareImages/name,cirros)", PKG, True),
        ("(eq,softwareImages/name,fedora)", PKG, False),
        ("(eq,softwareImages/checksum/algorithm,sha-512)", PKG, True),
        ("(neq,softwareImages/name,fedora)", PKG, True),
        ("(neq,softwareImages/name,cirros)", PKG, False),  # negation: no image may be named cirros
        ("(gt,softwareImages/size,1000)", PKG, True),
        ("(lt,softwareImages/size,10)", PKG, False),
        ("(eq,instantiatedVnfInfo/vnfcResourceInfo/vnfcCpInfo/cpdId,CP3)", INSTANCE, True),
        ("(eq,instantiatedVnfInfo/vnfcResourceInfo/vnfcCpInfo/cpdId,CP9)", INSTANCE, False),
        ("(eq,instantiatedVnfInfo/scaleStatus/scaleLevel,2)", INSTANCE, True),
        # arrays of arrays
        ("(eq,matrix/v,3)", PKG, True),
        ("(gte,matrix/v,4)", PKG, False),
        # array as the last level
        ("(eq,tags,green)", PKG, True),
        ("(in,tags,blue,red)", PKG, True),
        ("(nin,tags,blue,yellow)", PKG, True),
        ("(neq,tags,red)", PKG, False),
        ("(cont,tags,ree)", PKG, True),
        # numbers: numeric comparison
        ("(eq,userDefinedData/weight,100)", PKG, True),
        ("(eq,userDefinedData/weight,100.0)", PKG, True),
        ("(eq,userDefinedData/weight,1e2)", PKG, True),
        ("(gt,userDefinedData/weight,99)", PKG, True),
        ("(gt,userDefinedData/weight,9)", PKG, True),  # numerically, not "100" < "9"
        ("(lt,userDefinedData/weight,100)", PKG, False),
        ("(lte,userDefinedData/weight,100)", PKG, True),
        ("(gte,userDefinedData/weight,100.5)", PKG, False),
        ("(lt,userDefinedData/ratio,.75)", PKG, True),
        ("(eq,userDefinedData/weight,abc)", PKG, False),
        ("(neq,userDefinedData/weight,abc)", PKG, True),
        # booleans
        ("(eq,userDefinedData/enabled,true)", PKG, True),
        ("(eq,userDefinedData/enabled,false)", PKG, False),
        ("(eq,userDefinedData/enabled,yes)", PKG, False),
        # strings compare as strings (ISO timestamps order correctly)
        ("(gt,createdAt,2024-01-01T00:00:00Z)", INSTANCE, True),
        ("(lt,createdAt,2024-01-01T00:00:00Z)", INSTANCE, False),
        ("(gte,id,i1)", INSTANCE, True),
        # complex attributes never equal a value
        ("(eq,instantiatedVnfInfo,STARTED)", INSTANCE, False),
        # null is treated as absent
        ("(eq,nothing,None)", PKG, False),
        ("(neq,nothing,x)", PKG, True),
        # absent attribute: positive fails, negative matches
        ("(eq,absent,x)", PKG, False),
        ("(neq,absent,x)", PKG, True),
        ("(nin,absent,x,y)", PKG, True),
        ("(ncont,absent,x)", PKG, True),
        # quoting
        ("(eq,userDefinedData/key,'a,b;c(d)''e')", PKG, True),
        ("(eq,userDefinedData/key,'a,b;c(d)e')", PKG, False),
        ("(cont,userDefinedData/key,';c(')", PKG, True),
        ("(in,vnfProductName,'x,y','Sample VNF')", PKG, True),
        ("(eq,vnfInstanceName,my vnf)", INSTANCE, True),  # blanks are part of the value
        ("(eq,vnfInstanceName,'my vnf')", INSTANCE, True),
        ("(eq,vnfProductName,'')", PKG, False),
    ],
)
def test_filter_matches(expr: str, doc: dict[str, Any], expected: bool) -> None:
    assert parse_filter(expr).matches(doc) is expected


def test_empty_string_value_matches_empty_attribute() -> None:
    assert parse_filter("(eq,name,'')").matches({"name": ""})
    assert not parse_filter("(eq,name,'')").matches({"name": "x"})


def test_parse_structure() -> None:
    f = parse_filter("(in,a/b/c,'it''s',x);(gt,n,3)")
    assert f == Filter(
        terms=(Term(op="in", path=("a", "b", "c"), values=("it's", "x")), Term(op="gt", path=("n",), values=("3",)))
    )
    assert f.terms[0].attr_name == "a/b/c"
    assert f({"n": 4, "a": {"b": [{"c": "it's"}]}})


def test_values_at_flattens_every_level() -> None:
    assert values_at(PKG, ("matrix", "v")) == [1, 2, 3]
    assert values_at({"a": [[1, [2]], 3]}, ("a",)) == [1, 2, 3]
    assert values_at({"a": {"b": None}}, ("a", "b")) == []


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("", "empty"),
        ("eq,id,1", "expected '(' to open a filter term, found 'e'"),
        ("(eq,id,1", "expected ')'"),
        ("(eq,id,1))", "position 10: expected ';'"),
        ("(foo,id,1)", "unknown operator 'foo'"),
        ("(EQ,id,1)", "unknown operator 'EQ'"),
        ("(,id,1)", "missing operator"),
        ("(eq)", "expected ','"),
        ("(eq,id)", "expected ','"),
        ("(eq,,1)", "missing attribute name"),
        ("(eq,a//b,1)", "empty level"),
        ("(eq,/a,1)", "empty level"),
        ("(eq,a/,1)", "empty level"),
        ("(eq,id,)", "empty value"),
        ("(in,id,a,)", "empty value"),
        ("(eq,id,1,2)", "'eq' takes exactly one value, got 2"),
        ("(gt,id,1,2)", "'gt' takes exactly one value"),
        ("(eq,id,'abc)", "unterminated quoted value"),
        ("(eq,id,'a'b)", "quoted value must be followed"),
        ("(eq,id,ab'c)", "quote inside an unquoted value"),
        ("(eq,i'd,1)", "quotes are not allowed in attribute names"),
        ("(eq,id,1);", "trailing ';'"),
        ("(eq,id,1)(eq,id,2)", "expected ';' between filter terms"),
        ("(eq,id,1);;(eq,id,2)", "expected '('"),
        ("(eq, id,1)", "leading or trailing blanks"),
        ("(eq,id,a(b)", "position 9: expected ')'"),
    ],
)
def test_invalid_filters(expr: str, fragment: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse_filter(expr)
    assert fragment in info.value.detail
    assert info.value.status == 400
    assert info.value.detail.startswith("invalid filter")


def test_error_position_points_at_problem() -> None:
    with pytest.raises(BadRequest) as info:
        parse_filter("(eq,id,1);(bad,id,1)")
    assert "position 12" in info.value.detail  # 1-based index of 'bad'
