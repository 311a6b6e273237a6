"""Safe YAML for untrusted VNFD files: the safe loader, bounded in size, nesting depth, aliases and
nodes once every alias is expanded. Errors name the file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from vnfm.domain.errors import PayloadTooLarge, UnprocessableEntity

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class YamlLimits:
    max_bytes: int = 2 * 1024 * 1024
    max_depth: int = 64
    max_aliases: int = 1000
    max_nodes: int = 200_000  # nodes of the document with every alias expanded


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts what it composes, aliases expanded, and limits nesting depth."""

    def __init__(self, stream: str, name: str, limits: YamlLimits) -> None:
        super().__init__(stream)
        self._name = name
        self._limits = limits
        self._depth = 0
        self._aliases = 0
        self._sizes: dict[int, int] = {}

    def construct_scalar(self, node: Any) -> Any:
        """A scalar's text; one that cannot be stored faithfully (NUL, a lone surrogate from a
        `\\ud800` escape) is refused naming the file and line, as a JSON body's is."""
        value = super().construct_scalar(node)
        bad = _UNSTORABLE.search(value) if isinstance(value, str) else None
        if bad:
            raise UnprocessableEntity(f"{self._name} line {node.start_mark.line + 1}: U+{ord(bad.group()):04X} "
                                      "cannot be stored (NUL or a lone surrogate)")
        return value

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            anchor = self.peek_event().anchor
            target = self.anchors.get(anchor) if anchor is not None else None
            if target is not None:
                self._aliases += 1
                if self._aliases > self._limits.max_aliases:
                    raise UnprocessableEntity(
                        f"{self._name}: more than {self._limits.max_aliases} YAML aliases (alias bomb?)"
                    )
                if id(target) not in self._sizes:
                    raise UnprocessableEntity(f"{self._name}: recursive YAML alias '*{anchor}'")
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > self._limits.max_depth:
            raise UnprocessableEntity(
                f"{self._name}: YAML nested deeper than {self._limits.max_depth} levels"
            )
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        size = 1
        if isinstance(node, SequenceNode):
            size += sum(self._sizes.get(id(c), 1) for c in node.value)
        elif isinstance(node, MappingNode):
            size += sum(self._sizes.get(id(k), 1) + self._sizes.get(id(v), 1) for k, v in node.value)
        if size > self._limits.max_nodes:
            raise UnprocessableEntity(
                f"{self._name}: YAML expands to more than {self._limits.max_nodes} nodes (alias bomb?)"
            )
        self._sizes[id(node)] = size
        return node


def load_yaml_safely(text: str | bytes, name: str, limits: YamlLimits | None = None) -> Any:
    """Parse one YAML document from an untrusted source; errors name `name`."""
    limits = limits or YamlLimits()
    if len(text) > limits.max_bytes:
        raise PayloadTooLarge(f"{name} is {len(text)} bytes, over the YAML limit of {limits.max_bytes}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise UnprocessableEntity(f"{name} is not UTF-8 text") from None
    loader = _BoundedLoader(text, name, limits)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise UnprocessableEntity(f"{name}: invalid YAML: {str(exc)[:500]}") from None
    except RecursionError:
        raise UnprocessableEntity(f"{name}: YAML nested too deeply") from None
    finally:
        loader.dispose()


def load_yaml_documents(text: str | bytes, name: str, limits: YamlLimits | None = None) -> list[Any]:
    """Every document of a multi-document YAML stream (`---`), with the limits of `load_yaml_safely`."""
    limits = limits or YamlLimits()
    if len(text) > limits.max_bytes:
        raise PayloadTooLarge(f"{name} is {len(text)} bytes, over the YAML limit of {limits.max_bytes}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise UnprocessableEntity(f"{name} is not UTF-8 text") from None
    loader = _BoundedLoader(text, name, limits)
    docs: list[Any] = []
    try:
        while loader.check_data():
            docs.append(loader.get_data())
    except yaml.YAMLError as exc:
        raise UnprocessableEntity(f"{name}: invalid YAML: {str(exc)[:500]}") from None
    except RecursionError:
        raise UnprocessableEntity(f"{name}: YAML nested too deeply") from None
    finally:
        loader.dispose()
    return docs
