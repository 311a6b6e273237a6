"""Infrastructure drivers by VIM type, and how management drivers reach hosts on each.

Built-ins are registered by the composition root; a third-party VIM type plugs in as a Python entry
point in the group `vnfm.infra_drivers` (name = VIM type, value = a factory returning an
`InfraDriver`). Node access (`NodeAccess`) is bound per VIM type as well; a VIM type without one
gets real SSH. A Kubernetes VIM that a cluster driver registered says which VIM its nodes run on
(`extra.infra_vim_id`): hosts on it are reached the way that VIM's hosts are.
"""

from __future__ import annotations

from collections.abc import Callable

from vnfm.adapters.plugins import DriverFactories
from vnfm.domain.model import Vim
from vnfm.service.ports import InfraDriver, NodeAccess

ENTRY_POINT_GROUP = "vnfm.infra_drivers"


class InfraDrivers(DriverFactories[InfraDriver]):
    def __init__(self, default_nodes: NodeAccess, vim_of: Callable[[str], Vim | None] | None = None) -> None:
        super().__init__("infrastructure driver", ENTRY_POINT_GROUP)
        self.node_access: dict[str, NodeAccess] = {}
        self.default_nodes = default_nodes
        self.vim_of = vim_of

    def register_nodes(self, vim_type: str, access: NodeAccess) -> None:
        self.node_access[vim_type] = access

    def nodes_of(self, vim: Vim) -> NodeAccess:
        """How management drivers reach the hosts of an instance on `vim`."""
        underlying = str(vim.extra.get("infra_vim_id") or "") if vim.vim_type == "kubernetes" else ""
        if underlying and self.vim_of is not None and underlying != vim.id:
            base = self.vim_of(underlying)
            if base is not None and base.vim_type != "kubernetes":
                return self.nodes_of(base)
        return self.node_access.get(vim.vim_type, self.default_nodes)
