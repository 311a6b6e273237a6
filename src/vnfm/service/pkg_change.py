"""change_vnfpkg (SOL003 v3.3.1 CHANGE_VNFPKG) as this branch has it: not implemented yet.

The engine operation is built on branch h26-upgrade (its InstanceService.change_vnfpkg replaces
this at merge). Until then the task answers what unsupported.py answers on /vnflcm/v1: 404 with
a ProblemDetails naming the operation (SOL003: a task not supported does not exist).
"""

from __future__ import annotations

from typing import Any, Protocol

from vnfm.domain.errors import NotFound
from vnfm.domain.model import OpOcc, VnfInstance


class _Instances(Protocol):
    def get(self, inst_id: str) -> VnfInstance: ...


class ChangeVnfPkgNotImplemented:
    """Mixed into InstanceService."""

    def change_vnfpkg(self: _Instances, inst_id: str, body: dict[str, Any]) -> OpOcc:
        self.get(inst_id)  # an unknown instance: its own 404
        raise NotFound("the CHANGE_VNFPKG task (change_vnfpkg) is not implemented by vnfm: the LCM operations it "
                       "implements are INSTANTIATE, SCALE, HEAL, TERMINATE, MODIFY_INFO", operation="CHANGE_VNFPKG")
