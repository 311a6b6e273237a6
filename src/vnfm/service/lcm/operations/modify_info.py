"""Modify VNF information (SOL003 PATCH): `modify_information_start` hook, apply the changes
(JSON merge patch per attribute), `modify_information_end` hook."""

from __future__ import annotations

from typing import Any

from vnfm.domain.model import VnfInstance
from vnfm.domain.patch import merge_patch
from vnfm.service.lcm.job import Job
from vnfm.service.lcm.stages import Stages

MERGED = (("metadata", "metadata"), ("extensions", "extensions"),
          ("vnfConfigurableProperties", "vnf_configurable_properties"))


async def modify_info(st: Stages, job: Job) -> None:
    changes: dict[str, Any] = job.occ.operation_params
    await st.stage(job, "modify_information_start", lambda: st.hook(job, "modify_information_start"))

    async def apply() -> None:
        _apply(job.inst, changes)
        job.occ.changed_info = {k: v for k, v in changes.items() if k != "vimConnectionInfo"}

    await st.stage(job, "modify", apply)
    await st.stage(job, "modify_information_end", lambda: st.hook(job, "modify_information_end"))


def _apply(inst: VnfInstance, changes: dict[str, Any]) -> None:
    if "vnfInstanceName" in changes:
        inst.vnf_instance_name = changes["vnfInstanceName"]
    if "vnfInstanceDescription" in changes:
        inst.vnf_instance_description = changes["vnfInstanceDescription"]
    for key, attr in MERGED:
        if key in changes:
            setattr(inst, attr, merge_patch(getattr(inst, attr), changes[key]))
    if "vimConnectionInfo" in changes:
        by_id = {e.get("id"): e for e in inst.vim_connection_info}
        for entry in changes["vimConnectionInfo"]:
            by_id[entry.get("id")] = merge_patch(by_id.get(entry.get("id"), {}), entry)
        inst.vim_connection_info = list(by_id.values())
