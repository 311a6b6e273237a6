from __future__ import annotations

import re

import pytest

from vnfm.domain.errors import PayloadTooLarge, UnprocessableEntity
from vnfm.packaging.tosca import YamlLimits, load_yaml_safely

from ..helpers import SIMPLE_DF, example_files, parse_files

BOMB = """
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
"""


def test_yaml_alias_bomb_in_package() -> None:
    files = example_files()
    files[SIMPLE_DF] = files[SIMPLE_DF] + BOMB.encode()
    with pytest.raises(UnprocessableEntity, match=f"{SIMPLE_DF}: YAML expands to more than"):
        parse_files(files)


def test_load_yaml_safely_limits() -> None:
    with pytest.raises(UnprocessableEntity, match="x.yaml: more than 3 YAML aliases"):
        load_yaml_safely("a: &a 1\nb: [*a, *a, *a, *a]\n", "x.yaml", YamlLimits(max_aliases=3))
    with pytest.raises(UnprocessableEntity, match="deep.yaml: YAML nested deeper than 64"):
        load_yaml_safely("[" * 100 + "]" * 100, "deep.yaml")
    with pytest.raises(UnprocessableEntity, match="rec.yaml: recursive YAML alias"):
        load_yaml_safely("a: &a [1, *a]\n", "rec.yaml")
    with pytest.raises(PayloadTooLarge, match="big.yaml is 2000 bytes"):
        load_yaml_safely("#" * 2000, "big.yaml", YamlLimits(max_bytes=1000))
    with pytest.raises(UnprocessableEntity, match="bad.yaml: invalid YAML"):
        load_yaml_safely("a: [1, 2\n", "bad.yaml")
    with pytest.raises(UnprocessableEntity, match="two.yaml: invalid YAML"):
        load_yaml_safely("a: 1\n---\nb: 2\n", "two.yaml")
    with pytest.raises(UnprocessableEntity, match="obj.yaml: invalid YAML"):
        load_yaml_safely("a: !!python/object/apply:os.system ['true']\n", "obj.yaml")
    assert load_yaml_safely("a: &a [1, 2]\nb: *a\n", "ok.yaml") == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize(("text", "line", "char"), [
    ('a: "\\ud800"', 1, "U+D800"),
    ('b: 1\nc:\n  - "x\\0y"', 3, "U+0000"),
    ('"\\udfff": key', 1, "U+DFFF"),
])
def test_text_that_cannot_be_stored_is_refused_naming_the_line(text: str, line: int, char: str) -> None:
    expected = re.escape(f"Definitions/v.yaml line {line}: {char} cannot be stored")
    with pytest.raises(UnprocessableEntity, match=expected):
        load_yaml_safely(text, "Definitions/v.yaml")
    assert load_yaml_safely('a: "\\u00e9\\U0001F600"', "x") == {"a": "\u00e9\U0001f600"}  # real text is fine
