"""What the console reads besides the records: the nodes of a cluster's Kubernetes VIM (their
Ready condition and kubelet version, asked of its API server, bounded in time) and, when a fault
management service is part of this server, the instance's open alarms.

The alarm source is optional: a service that keeps alarms puts an `AlarmSource` in
`App.extras["alarms"]`; without one the page says that alarms are not watched."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from vnfm.adapters.kube.nodes import node_health
from vnfm.bootstrap import App
from vnfm.domain.errors import VnfmError
from vnfm.service.views import masked

log = logging.getLogger("vnfm.console")
NODES_TIMEOUT = 6.0


@runtime_checkable
class AlarmSource(Protocol):
    def open_alarms(self, instance_id: str) -> list[dict[str, Any]]:
        """The instance's alarms not cleared, as SOL003 Alarm documents (newest first)."""
        ...


@dataclass
class Nodes:
    rows: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""  # why the nodes could not be read ("" when they were)
    endpoint: str = ""  # the cluster's API server as its VIM names it (the VIP or the LB frontend)


async def cluster_nodes(core: App, vim_id: str | None) -> Nodes:
    if not vim_id:
        return Nodes(problem="the cluster registered no Kubernetes VIM")
    vim = await asyncio.to_thread(core.vims.get, vim_id)
    if vim is None:
        return Nodes(problem=f"its Kubernetes VIM {vim_id} is no longer registered")
    endpoint = str(vim.interface_info.get("endpoint") or vim.access_info.get("authUrl") or "")
    try:
        rows = await asyncio.wait_for(asyncio.to_thread(node_health, vim, NODES_TIMEOUT - 1), NODES_TIMEOUT)
    except TimeoutError:
        return Nodes(problem=f"the API server of VIM {vim_id} did not answer within {NODES_TIMEOUT:.0f} s",
                     endpoint=endpoint)
    except VnfmError as exc:
        log.info("console: nodes of VIM %s not read: %s", vim_id, exc.detail)
        return Nodes(problem=exc.detail, endpoint=endpoint)
    return Nodes(rows=rows, endpoint=endpoint)


def alarm_source(core: App) -> AlarmSource | None:
    found = core.extras.get("alarms")
    return found if isinstance(found, AlarmSource) else None


async def open_alarms(core: App, instance_id: str) -> list[dict[str, Any]] | None:
    """The open alarms (secrets masked), or None when no alarm source is part of this server."""
    source = alarm_source(core)
    if source is None:
        return None
    found = await asyncio.to_thread(source.open_alarms, instance_id)
    return [masked(a) for a in found if isinstance(a, dict)]
