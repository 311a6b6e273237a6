"""Terminate: `terminate_start` hook, delete every resource of the VNF, `terminate_end` hook; the
instance goes back to NOT_INSTANTIATED."""

from __future__ import annotations

from vnfm.domain.model import InstantiationState, VnfInstance
from vnfm.domain.resources import VnfResources
from vnfm.service.lcm.job import Job, plan_vnfcs
from vnfm.service.lcm.operations.changes import affected
from vnfm.service.lcm.stages import Stages


async def terminate(st: Stages, job: Job) -> None:
    infra = None if job.vim_gone else job.require_infra()
    old = plan_vnfcs(job.plan.get("old", []))
    await st.stage(job, "terminate_start", lambda: st.hook(job, "terminate_start", removed=old))

    async def undeploy() -> None:
        if infra is None:
            st.progress(job, f"VIM {job.inst.vim_id} is no longer registered (its cluster was terminated): "
                             "the VNF's resources are already gone")
        else:
            st.progress(job, "deleting every resource of the VNF")
            await infra.undeploy(st.infra_ctx(job))
        job.inst.resources = VnfResources()
        job.occ.resource_changes = {}
        affected(job, old, "REMOVED")

    await st.stage(job, "infra_undeploy", undeploy)
    await st.stage(job, "terminate_end", lambda: st.hook(job, "terminate_end", removed=old))
    clear_instantiated(job.inst)


def clear_instantiated(inst: VnfInstance) -> None:
    """Forget everything instantiate gave the instance (after terminate, or a rolled back instantiate)."""
    inst.instantiation_state = InstantiationState.NOT_INSTANTIATED
    inst.flavour_id = None
    inst.instantiation_level_id = None
    inst.scale_levels = {}
    inst.resources = VnfResources()
    inst.ext_virtual_links = []
    inst.ext_managed_virtual_links = []
    inst.additional_params = {}
    inst.driver_state = {}
    inst.vim_id = None
