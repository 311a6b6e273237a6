"""ETSI GS NFV-SOL013 v2.6.1 query parameters for list resources: filters (5.2) and selectors (5.3).

Everything here works on the JSON documents the API returns (dicts with the standard's camelCase
keys), so a filter names attributes exactly as a client sees them.

Filter (clause 5.2): ``(op,attrName,value[,value]*)`` terms joined by ``;`` (all must match).

* ``attrName`` is a path whose levels are separated by ``/`` (``instantiatedVnfInfo/vnfState``).
  An array met anywhere on the path (including the last level, and arrays of arrays) is walked
  into: the term looks at every value the path reaches.
* Positive operators (eq, in, gt, gte, lt, lte, cont) match when at least one reached value
  satisfies them. Negative operators (neq, nin, ncont) are their exact negation: they match when
  no reached value satisfies the positive form, so ``(neq,softwareImages/name,a)`` means "has no
  image named a", and a negative term matches a document that lacks the attribute.
* eq/neq/gt/gte/lt/lte take one value; in/nin/cont/ncont take one or more.
* A value containing ``,`` ``;`` ``(`` ``)`` or ``'`` is written in single quotes, a quote inside
  doubled (``'it''s'``). An unquoted value may not be empty (write ``''`` for the empty string).
* Comparison: when the attribute is a JSON number and the value reads as a number, they compare
  as numbers; booleans compare with ``true`` / ``false``; strings compare as strings (so gt/lt
  order ISO 8601 timestamps correctly). Anything else (objects, mixed types) does not satisfy
  a positive operator. cont/ncont look for substrings in string attributes.

Selectors (clause 5.3): all_fields, fields, exclude_fields, exclude_default. The only valid
combinations are those of SOL013 table 5.3.2-1: none, all_fields, fields, exclude_fields,
exclude_default, exclude_default + fields. Without selectors (or with exclude_default) the
resource's default-excluded complex attributes are removed; ``fields`` adds attributes back (a
nested path such as ``instantiatedVnfInfo/vnfState`` adds just that part of its parent).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from vnfm.domain.errors import BadRequest

SINGLE_VALUE_OPS = frozenset({"eq", "neq", "gt", "gte", "lt", "lte"})
MULTI_VALUE_OPS = frozenset({"in", "nin", "cont", "ncont"})
OPERATORS = SINGLE_VALUE_OPS | MULTI_VALUE_OPS
_NEGATION = {"neq": "eq", "nin": "in", "ncont": "cont"}
_SPECIAL = ",;()'"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

SELECTOR_PARAMS = ("all_fields", "fields", "exclude_fields", "exclude_default")
LIST_PARAMS = ("filter", *SELECTOR_PARAMS, "nextpage_opaque_marker")


# ============================================================================= filter model
@dataclass(frozen=True)
class Term:
    """One ``(op,attrName,value...)`` expression."""

    op: str
    path: tuple[str, ...]
    values: tuple[str, ...]

    @property
    def attr_name(self) -> str:
        return "/".join(self.path)

    def matches(self, doc: Any) -> bool:
        reached = values_at(doc, self.path)
        positive = _NEGATION.get(self.op, self.op)
        hit = any(_satisfies(positive, v, s) for v in reached for s in self.values)
        return not hit if self.op in _NEGATION else hit


@dataclass(frozen=True)
class Filter:
    """A parsed ``filter`` parameter: every term must match."""

    terms: tuple[Term, ...]

    def matches(self, doc: Any) -> bool:
        return all(t.matches(doc) for t in self.terms)

    def __call__(self, doc: Any) -> bool:
        return self.matches(doc)


def _flatten(value: Any) -> Iterable[Any]:
    if isinstance(value, list | tuple):
        for item in value:
            yield from _flatten(item)
    else:
        yield value


def values_at(doc: Any, path: Sequence[str]) -> list[Any]:
    """Every non-null value `path` reaches in `doc`, walking into arrays at any level."""
    current: list[Any] = [doc]
    for seg in path:
        nxt: list[Any] = []
        for node in current:
            for item in _flatten(node):
                if isinstance(item, Mapping) and seg in item:
                    nxt.append(item[seg])
        current = nxt
    return [v for node in current for v in _flatten(node) if v is not None]


def _as_number(text: str) -> float | None:
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(actual: Any, wanted: str) -> int | None:
    """-1/0/1 comparing a document value with a filter value, None when incomparable."""
    if isinstance(actual, bool):
        if wanted.lower() not in ("true", "false"):
            return None
        w = wanted.lower() == "true"
        return (actual > w) - (actual < w)
    if _is_number(actual):
        num = _as_number(wanted)
        if num is None:
            return None
        return (actual > num) - (actual < num)
    if isinstance(actual, str):
        return (actual > wanted) - (actual < wanted)
    return None


def _satisfies(op: str, actual: Any, wanted: str) -> bool:
    if op == "cont":
        return isinstance(actual, str) and wanted in actual
    cmp = _compare(actual, wanted)
    if cmp is None:
        return False
    if op in ("eq", "in"):
        return cmp == 0
    if op == "gt":
        return cmp > 0
    if op == "gte":
        return cmp >= 0
    if op == "lt":
        return cmp < 0
    if op == "lte":
        return cmp <= 0
    raise AssertionError(op)  # pragma: no cover - the parser only builds known operators


# ============================================================================= filter parser
def _bad(msg: str, pos: int | None = None) -> BadRequest:
    where = f" at position {pos + 1}" if pos is not None else ""
    return BadRequest(f"invalid filter{where}: {msg}")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str, what: str) -> None:
        got = self.peek()
        if got != char:
            found = f"'{got}'" if got else "the end of the expression"
            raise _bad(f"expected '{char}' {what}, found {found}", self.pos)
        self.pos += 1

    def bare(self) -> tuple[str, int]:
        """Characters up to the next special character."""
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _SPECIAL:
            self.pos += 1
        return self.text[start : self.pos], start

    def value(self) -> str:
        start = self.pos
        if self.peek() == "'":
            self.pos += 1
            out: list[str] = []
            while True:
                if self.pos >= len(self.text):
                    raise _bad("unterminated quoted value", start)
                ch = self.text[self.pos]
                if ch == "'":
                    if self.text[self.pos + 1 : self.pos + 2] == "'":
                        out.append("'")
                        self.pos += 2
                        continue
                    self.pos += 1
                    break
                out.append(ch)
                self.pos += 1
            if self.peek() not in (",", ")"):
                raise _bad("a quoted value must be followed by ',' or ')'", self.pos)
            return "".join(out)
        text, _ = self.bare()
        if self.peek() == "'":
            raise _bad("quote inside an unquoted value; quote the whole value and double inner quotes",
                       self.pos)
        if not text:
            raise _bad("empty value (write '' for an empty string)", start)
        return text


def _parse_path(name: str, pos: int) -> tuple[str, ...]:
    if not name:
        raise _bad("missing attribute name", pos)
    if name != name.strip():
        raise _bad(f"attribute name '{name}' has leading or trailing blanks", pos)
    segs = tuple(name.split("/"))
    if any(not s for s in segs):
        raise _bad(f"attribute name '{name}' has an empty level", pos)
    return segs


def _parse_term(sc: _Scanner) -> Term:
    sc.expect("(", "to open a filter term")
    op, op_pos = sc.bare()
    if not op:
        raise _bad("missing operator", op_pos)
    if op not in OPERATORS:
        raise _bad(f"unknown operator '{op}' (expected one of {', '.join(sorted(OPERATORS))})", op_pos)
    sc.expect(",", f"after operator '{op}'")
    name, name_pos = sc.bare()
    if sc.peek() == "'":
        raise _bad("quotes are not allowed in attribute names", sc.pos)
    path = _parse_path(name, name_pos)
    sc.expect(",", f"after attribute name '{name}'")
    values = [sc.value()]
    while sc.peek() == ",":
        sc.pos += 1
        values.append(sc.value())
    close_pos = sc.pos
    sc.expect(")", "to close the filter term")
    if op in SINGLE_VALUE_OPS and len(values) != 1:
        raise _bad(f"operator '{op}' takes exactly one value, got {len(values)}", close_pos)
    return Term(op=op, path=path, values=tuple(values))


def parse_filter(expr: str) -> Filter:
    """Parse a SOL013 ``filter`` query parameter. Raises BadRequest explaining what is wrong."""
    if not expr:
        raise _bad("the expression is empty")
    sc = _Scanner(expr)
    terms = [_parse_term(sc)]
    while sc.pos < len(expr):
        sc.expect(";", "between filter terms")
        if sc.pos >= len(expr):
            raise _bad("trailing ';' without a term", sc.pos - 1)
        terms.append(_parse_term(sc))
    return Filter(terms=tuple(terms))


# ============================================================================= selectors
@lru_cache(maxsize=512)  # a list applies the same few selectors to each of its items
def _split_path(path: str, param: str) -> tuple[str, ...]:
    segs = tuple(path.split("/"))
    if not path or any(not s for s in segs):
        raise BadRequest(f"invalid attribute path '{path}' in '{param}'")
    return segs


def parse_field_list(value: str, param: str = "fields") -> list[str]:
    """``a,b/c`` -> ["a", "b/c"]; empty lists or empty names raise BadRequest."""
    if not value:
        raise BadRequest(f"query parameter '{param}' needs a comma-separated list of attribute names")
    names = value.split(",")
    for n in names:
        if not n:
            raise BadRequest(f"query parameter '{param}' has an empty attribute name: '{value}'")
        _split_path(n, param)
    return names


def check_selector_combination(
    all_fields: bool, fields: Sequence[str] | None, exclude_fields: Sequence[str] | None, exclude_default: bool
) -> None:
    """Reject combinations that SOL013 table 5.3.2-1 does not list."""
    if all_fields:
        others = [
            n
            for n, given in (("fields", fields is not None), ("exclude_fields", exclude_fields is not None),
                             ("exclude_default", exclude_default))
            if given
        ]
        if others:
            raise BadRequest(f"'all_fields' cannot be combined with {', '.join(repr(o) for o in others)}")
    if fields is not None and exclude_fields is not None:
        raise BadRequest("'fields' and 'exclude_fields' cannot be combined")
    if exclude_fields is not None and exclude_default:
        raise BadRequest("'exclude_fields' and 'exclude_default' cannot be combined")


_MISSING: Any = object()


def _include(src: Any, dst: Any, segs: Sequence[str]) -> Any:
    """`dst` with the part of `src` that `segs` names merged in (arrays are walked into)."""
    if not segs:
        return copy.deepcopy(src)
    if isinstance(src, list):
        base = dst if isinstance(dst, list) and len(dst) == len(src) else [_MISSING] * len(src)
        return [_include(s, d, segs) for s, d in zip(src, base, strict=True)]
    if isinstance(src, Mapping):
        out = dict(dst) if isinstance(dst, Mapping) else {}
        if segs[0] in src:
            out[segs[0]] = _include(src[segs[0]], out.get(segs[0], _MISSING), segs[1:])
        return out
    # A scalar where the path expects an object: keep what is there (the scalar itself).
    return copy.deepcopy(src) if dst is _MISSING else dst


def _remove(node: Any, segs: Sequence[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _remove(item, segs)
        return
    if not isinstance(node, dict):
        return
    if len(segs) == 1:
        node.pop(segs[0], None)
    elif segs[0] in node:
        _remove(node[segs[0]], segs[1:])


def apply_selectors(
    doc: Mapping[str, Any],
    all_fields: bool = False,
    fields: Sequence[str] | None = None,
    exclude_fields: Sequence[str] | None = None,
    exclude_default: bool = False,
    default_excluded: Sequence[str] = (),
    owned: bool = False,
) -> dict[str, Any]:
    """A copy of `doc` reduced as the SOL013 5.3 attribute selectors say (`doc` is not modified).
    `owned`: the caller gives `doc` up (built for this response), so its parts are reused, not copied."""
    check_selector_combination(all_fields, fields, exclude_fields, exclude_default)
    dup: Any = (lambda v: v) if owned else copy.deepcopy
    if all_fields:
        return dict(doc) if owned else copy.deepcopy(dict(doc))
    removed = exclude_fields if exclude_fields is not None else default_excluded
    param = "exclude_fields" if exclude_fields is not None else "default_excluded"
    paths = [_split_path(name, param) for name in removed]
    whole = {p[0] for p in paths if len(p) == 1}  # top-level attributes removed: never copied
    result: dict[str, Any] = {k: dup(v) for k, v in doc.items() if k not in whole}
    if owned and any(len(segs) > 1 for segs in paths):
        result = copy.deepcopy(result)  # nested removals change the parts: never the caller's
    for segs in paths:
        if len(segs) > 1:
            _remove(result, segs)
    if exclude_fields is not None:
        return result
    for name in fields or ():
        merged = _include(doc, result, _split_path(name, "fields"))
        result = merged if isinstance(merged, dict) else result
    return result


# ============================================================================= whole query
@dataclass(frozen=True)
class ListParams:
    """The validated list-query parameters of one request."""

    filter: Filter | None = None
    all_fields: bool = False
    fields: tuple[str, ...] | None = None
    exclude_fields: tuple[str, ...] | None = None
    exclude_default: bool = False
    nextpage_opaque_marker: str | None = None

    def matches(self, doc: Any) -> bool:
        return self.filter is None or self.filter.matches(doc)

    def select(self, doc: Mapping[str, Any], default_excluded: Sequence[str] = (),
               owned: bool = False) -> dict[str, Any]:
        return apply_selectors(
            doc,
            all_fields=self.all_fields,
            fields=self.fields,
            exclude_fields=self.exclude_fields,
            exclude_default=self.exclude_default,
            default_excluded=default_excluded,
            owned=owned,
        )

    def check_attributes(self, known: Iterable[str], resource: str) -> None:
        """BadRequest when `filter`, `fields` or `exclude_fields` name an attribute that `resource`
        does not have (SOL013 5.2 / 5.3: invalid attribute names are a 400, not an empty match)."""
        names = set(known)
        used = [("filter", t.path[0]) for t in (self.filter.terms if self.filter else ())]
        used += [("fields", f.split("/")[0]) for f in self.fields or ()]
        used += [("exclude_fields", f.split("/")[0]) for f in self.exclude_fields or ()]
        for param, name in used:
            if name not in names:
                raise BadRequest(f"'{param}' names '{name}', which is not an attribute of {resource}")

    def apply(self, docs: Iterable[Mapping[str, Any]], default_excluded: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Filter then select: the body of a list response."""
        return [self.select(d, default_excluded) for d in docs if self.matches(d)]


def _flag(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("", "true"):
        return True
    if v == "false":
        return False
    raise BadRequest(f"query parameter '{name}' takes no value (got '{value}')")


def parse_list_params(
    query: Mapping[str, str],
    *,
    selectors: bool = True,
    strict: bool = True,
    extra_allowed: Iterable[str] = (),
) -> ListParams:
    """Validate a list request's query (filter, selectors, paging marker).

    `selectors=False` for resources that support no attribute selectors (every list vnfm serves takes them).
    `strict` rejects parameters other than the SOL013 ones and `extra_allowed`. A parameter given
    twice is rejected when `query` can tell (Starlette's QueryParams has `getlist`).
    """
    allowed = set(LIST_PARAMS) | set(extra_allowed)
    if not selectors:
        allowed -= set(SELECTOR_PARAMS)
    for name in query:
        if name not in allowed:
            if name in SELECTOR_PARAMS:
                raise BadRequest(f"this resource does not support the attribute selector '{name}'")
            if strict:
                raise BadRequest(f"unknown query parameter '{name}'")
        getlist = getattr(query, "getlist", None)
        if callable(getlist) and len(getlist(name)) > 1:
            raise BadRequest(f"query parameter '{name}' is given more than once")

    flt: Filter | None = None
    if "filter" in query:
        flt = parse_filter(query["filter"])
    all_fields = "all_fields" in query and _flag("all_fields", query["all_fields"])
    exclude_default = "exclude_default" in query and _flag("exclude_default", query["exclude_default"])
    fields = tuple(parse_field_list(query["fields"], "fields")) if "fields" in query else None
    exclude = tuple(parse_field_list(query["exclude_fields"], "exclude_fields")) if "exclude_fields" in query else None
    marker = query.get("nextpage_opaque_marker")
    if marker is not None and not marker:
        raise BadRequest("query parameter 'nextpage_opaque_marker' is empty")
    check_selector_combination(all_fields, fields, exclude, exclude_default)
    return ListParams(
        filter=flt,
        all_fields=all_fields,
        fields=fields,
        exclude_fields=exclude,
        exclude_default=exclude_default,
        nextpage_opaque_marker=marker,
    )


# Default excluded complex attributes (SOL005 / SOL003 v2.6.1, clause "attribute selectors");
# the API routers list resources with these.
VNF_PKG_INFO_DEFAULT_EXCLUDED = ("softwareImages", "additionalArtifacts", "userDefinedData", "checksum")
VNF_INSTANCE_DEFAULT_EXCLUDED = (
    "vnfConfigurableProperties",
    "vimConnectionInfo",
    "instantiatedVnfInfo",
    "metadata",
    "extensions",
)
VNF_LCM_OP_OCC_DEFAULT_EXCLUDED = (
    "operationParams",
    "error",
    "resourceChanges",
    "changedInfo",
    "changedExtConnectivity",
)

# Top-level attributes of each listed resource (SOL005 9.5.2.5, SOL003 5.5.2.2 / 5.5.2.13 / 5.5.2.16):
# filters and selectors may only name these.
VNF_PKG_INFO_ATTRIBUTES = frozenset({
    "id", "vnfdId", "vnfProvider", "vnfProductName", "vnfSoftwareVersion", "vnfdVersion", "checksum",
    "softwareImages", "additionalArtifacts", "onboardingState", "operationalState", "usageState",
    "userDefinedData", "onboardingFailureDetails", "_links",
})
VNF_INSTANCE_ATTRIBUTES = frozenset({
    "id", "vnfInstanceName", "vnfInstanceDescription", "vnfdId", "vnfProvider", "vnfProductName",
    "vnfSoftwareVersion", "vnfdVersion", "vnfPkgId", "vnfConfigurableProperties", "vimConnectionInfo",
    "instantiationState", "instantiatedVnfInfo", "metadata", "extensions", "_links",
})
VNF_LCM_OP_OCC_ATTRIBUTES = frozenset({
    "id", "operationState", "stateEnteredTime", "startTime", "vnfInstanceId", "grantId", "operation",
    "isAutomaticInvocation", "operationParams", "isCancelPending", "cancelMode", "error", "resourceChanges",
    "changedInfo", "changedExtConnectivity", "_links",
})
SUBSCRIPTION_ATTRIBUTES = frozenset({"id", "filter", "callbackUri", "_links"})
