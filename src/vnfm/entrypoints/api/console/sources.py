"""What the console reads besides the records: the nodes of a cluster's Kubernetes VIM (their
Ready condition and kubelet version, asked of its API server, bounded in time) and the instance's
open alarms (the fault management service's, as /vnffm/v1 shows them)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from vnfm.adapters.kube.nodes import node_health
from vnfm.bootstrap import App
from vnfm.domain.alarms import alarm_info
from vnfm.domain.errors import VnfmError
from vnfm.service.views import masked

log = logging.getLogger("vnfm.console")
NODES_TIMEOUT = 6.0


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


async def open_alarms(core: App, instance_id: str) -> list[dict[str, Any]]:
    """The instance's alarms not cleared, as SOL003 Alarm documents (newest first, secrets masked)."""
    found = await asyncio.to_thread(core.alarms.open_for, instance_id)
    found.sort(key=lambda a: a.alarm_raised_time, reverse=True)
    return [masked(alarm_info(a)) for a in found]
