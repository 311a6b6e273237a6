"""SOL003 LCM tasks vnfm does not implement. SOL003 v2.6.1 (5.4.x.3.1, 404): a task that is not
supported for the VNF instance answers 404, "the task resource consequently does not exist"; the
ProblemDetails says which task it is and that vnfm does not implement it, instead of a bare
"no resource"."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.domain.errors import NotFound
from vnfm.entrypoints.api.common import app_of
from vnfm.entrypoints.api.routing import Router
from vnfm.entrypoints.api.v2.version import PREFIX as V2_PREFIX
from vnfm.entrypoints.api.v2.version import require_version

router = Router(prefix="/vnflcm/v1/vnf_instances/{inst_id}")
# /vnflcm/v2 (SOL003 v3.3.1): the same, its snapshot tasks too (change_vnfpkg is a v2 route of its own)
router_v2 = Router(prefix=V2_PREFIX + "/vnf_instances/{inst_id}", dependencies=[Depends(require_version)])

# task resource -> SOL003 LcmOperationType
TASKS = {
    "scale_to_level": "SCALE_TO_LEVEL",
    "change_flavour": "CHANGE_FLAVOUR",
    "operate": "OPERATE",
    "change_ext_conn": "CHANGE_EXT_CONN",
}
TASKS_V2 = {**TASKS, "create_snapshot": "CREATE_SNAPSHOT", "revert_to_snapshot": "REVERT_TO_SNAPSHOT"}
IMPLEMENTED = "INSTANTIATE, SCALE, HEAL, TERMINATE, MODIFY_INFO, CHANGE_VNFPKG"


def _add(target: APIRouter, task: str, operation: str, suffix: str = "") -> None:
    async def not_implemented(request: Request, inst_id: str) -> None:
        await off_loop(app_of(request).instances.get, inst_id)  # an unknown instance: its own 404
        raise NotFound(f"the {operation} task ({task}) is not implemented by vnfm: the LCM operations it "
                       f"implements are {IMPLEMENTED}", operation=operation)

    target.add_api_route(f"/{task}", not_implemented, methods=["POST"], name=f"not_implemented_{task}{suffix}",
                         include_in_schema=False)


for _task, _operation in TASKS.items():
    _add(router, _task, _operation)
for _task, _operation in TASKS_V2.items():
    _add(router_v2, _task, _operation, "_v2")
