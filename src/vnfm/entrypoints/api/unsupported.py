"""SOL003 LCM tasks vnfm does not implement. SOL003 v2.6.1 (5.4.x.3.1, 404): a task that is not
supported for the VNF instance answers 404, "the task resource consequently does not exist"; the
ProblemDetails says which task it is and that vnfm does not implement it, instead of a bare
"no resource"."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool as off_loop

from vnfm.domain.errors import NotFound
from vnfm.entrypoints.api.common import app_of

router = APIRouter(prefix="/vnflcm/v1/vnf_instances/{inst_id}")

# task resource -> SOL003 LcmOperationType
TASKS = {
    "scale_to_level": "SCALE_TO_LEVEL",
    "change_flavour": "CHANGE_FLAVOUR",
    "operate": "OPERATE",
    "change_ext_conn": "CHANGE_EXT_CONN",
}
IMPLEMENTED = "INSTANTIATE, SCALE, HEAL, TERMINATE, MODIFY_INFO, CHANGE_VNFPKG"


def _add(task: str, operation: str) -> None:
    async def not_implemented(request: Request, inst_id: str) -> None:
        await off_loop(app_of(request).instances.get, inst_id)  # an unknown instance: its own 404
        raise NotFound(f"the {operation} task ({task}) is not implemented by vnfm: the LCM operations it "
                       f"implements are {IMPLEMENTED}", operation=operation)

    router.add_api_route(f"/{task}", not_implemented, methods=["POST"], name=f"not_implemented_{task}",
                         include_in_schema=False)


for _task, _operation in TASKS.items():
    _add(_task, _operation)
