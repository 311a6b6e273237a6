"""Where a Kubespray release keeps its playbooks (its tree layout).

The VNFM names playbooks by their historic root names (`cluster.yml`, `scale.yml`,
`remove-node.yml`, `facts.yml`, `upgrade-cluster.yml`); each known layout says where that release
keeps them. Since v2.22.0 (May 2023) the playbooks live in `playbooks/` (with underscores) and
the root keeps only wrappers of some of them (no `facts.yml`); v2.16 to v2.21 keep them all at the
root. A tree is of the first layout whose entry points all exist; a tree that fits none is
refused, naming the known layouts. Checked against the real trees of v2.16.0, v2.23.3, v2.27.1
and v2.31.0 (notes/kubespray-releases.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# the playbooks the VNFM runs, by their historic names
PLAYBOOKS = ("cluster.yml", "scale.yml", "remove-node.yml", "facts.yml", "upgrade-cluster.yml")
# what a tree must have to be used (upgrade-cluster.yml, which change_vnfpkg runs, is found where
# the layout keeps it; a tree without it fails only that run)
ENTRY_POINTS = ("cluster.yml", "scale.yml", "remove-node.yml", "facts.yml")
SAMPLE = "inventory/sample"
_PATH = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")


@dataclass(frozen=True)
class TreeLayout:
    label: str  # the releases that keep their playbooks so
    paths: Mapping[str, str]  # playbook (historic name) -> path in the tree

    def __post_init__(self) -> None:
        if set(self.paths) != set(PLAYBOOKS):
            raise ValueError(f"layout {self.label!r} must place exactly {', '.join(PLAYBOOKS)}")
        for p in self.paths.values():
            if not _PATH.match(p) or ".." in p.split("/"):
                raise ValueError(f"layout path {p!r} is not a relative path")
        if "|" in self.label or "\n" in self.label:
            raise ValueError("a layout label has no '|' nor newline")

    def required(self) -> tuple[str, ...]:
        """The files and directories a tree of this layout has."""
        return (*(self.paths[p] for p in ENTRY_POINTS), SAMPLE)


LAYOUTS: tuple[TreeLayout, ...] = (
    TreeLayout("Kubespray v2.22 and later (playbooks/)", {
        "cluster.yml": "playbooks/cluster.yml", "scale.yml": "playbooks/scale.yml",
        "remove-node.yml": "playbooks/remove_node.yml", "facts.yml": "playbooks/facts.yml",
        "upgrade-cluster.yml": "playbooks/upgrade_cluster.yml"}),
    TreeLayout("Kubespray v2.16 to v2.21 (playbooks at the root)", {p: p for p in PLAYBOOKS}),
)


def find_layout(exists: Callable[[str], bool]) -> TreeLayout | None:
    """The layout of the tree where `exists(relative path)` tells what is there."""
    return next((lay for lay in LAYOUTS if all(exists(p) for p in lay.required())), None)


def known_layouts() -> str:
    """The known layouts, for an error that refuses a tree."""
    return "; ".join(f"{lay.label}: {', '.join(lay.required())}" for lay in LAYOUTS)


def layout_lines(playbook: str = "cluster.yml") -> str:
    """The layouts as the Ansible-server scripts read them: one a line,
    "label|path of `playbook` there|what the tree must have (space separated)"."""
    if playbook not in PLAYBOOKS:
        raise ValueError(f"playbook {playbook!r} is not one of {', '.join(PLAYBOOKS)}")
    return "\n".join(f"{lay.label}|{lay.paths[playbook]}|{' '.join(lay.required())}" for lay in LAYOUTS)
