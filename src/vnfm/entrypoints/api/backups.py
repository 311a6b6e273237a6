"""vnfm's extension route for a cluster's scheduled etcd backups: the newest backup (age, size,
keys), its restore drill's outcome and the latest attempt (service/backups.py)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.entrypoints.api.common import app_of
from vnfm.entrypoints.api.routing import Router
from vnfm.service import backups

router = Router()


@router.get("/vnfm/v1/vnf_instances/{inst_id}/backups")
async def show_backups(request: Request, inst_id: str) -> dict[str, Any]:
    app = app_of(request)
    inst = await off_loop(app.instances.get, inst_id)  # 404 / the caller's tenant, as every instance read
    row = await off_loop(app.extras["etcd_backups"].get, inst.id)
    return backups.view(inst.id, row)
