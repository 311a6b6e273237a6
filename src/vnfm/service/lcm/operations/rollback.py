"""Rollback (SOL003 5.4.15) of a failed instantiate (its resources deleted, the instance back to
NOT_INSTANTIATED), scale-out (the VNFCs it added removed, the old scale level back) or scale-in
whose VMs all still exist (the VNFCs it was removing go back into service). Rollback stages are
checkpointed like forward ones (`plan["rb_done"]`), so a failed rollback is retried."""

from __future__ import annotations

from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import LcmOperation
from vnfm.domain.resources import VnfResources
from vnfm.service.lcm.job import Job, plan_vnfcs
from vnfm.service.lcm.operations.change_vnfpkg import rollback_change_vnfpkg
from vnfm.service.lcm.operations.terminate import clear_instantiated
from vnfm.service.lcm.stages import Stages
from vnfm.service.ports import InfraDriver


async def rollback(st: Stages, job: Job) -> None:
    op = job.occ.operation
    if op == LcmOperation.INSTANTIATE and job.vim_gone:
        await _rollback_instantiate(st, job, None)
        return
    infra = job.require_infra()
    if op == LcmOperation.INSTANTIATE:
        await _rollback_instantiate(st, job, infra)
    elif op == LcmOperation.SCALE and job.plan.get("type") == "SCALE_IN":
        await _rollback_scale_in(st, job, infra)
    elif op == LcmOperation.SCALE:
        await _rollback_scale(st, job, infra)
    elif op == LcmOperation.CHANGE_VNFPKG:
        await rollback_change_vnfpkg(st, job)
    else:
        raise UnprocessableEntity(f"rollback of {op.value} is not supported")


def finish_rollback(job: Job) -> None:
    """After the last rollback stage: a rolled back instantiate leaves a NOT_INSTANTIATED instance."""
    if job.occ.operation == LcmOperation.INSTANTIATE:
        clear_instantiated(job.inst)
        job.occ.resource_changes = {}


async def _rollback_instantiate(st: Stages, job: Job, infra: InfraDriver | None) -> None:
    await st.rollback_stage(job, "terminate_start",
                            lambda: st.hook(job, "terminate_start", rollback=True,
                                            removed=list(job.inst.resources.vnfcs)))

    async def undeploy() -> None:
        if infra is None:
            st.progress(job, f"rolling back: VIM {job.inst.vim_id} is no longer registered (its cluster was "
                             "terminated): the VNF's resources are already gone")
        else:
            st.progress(job, "rolling back: deleting the VNF's resources")
            await infra.undeploy(st.infra_ctx(job))
        job.inst.resources = VnfResources()

    await st.rollback_stage(job, "infra_undeploy", undeploy)
    await st.rollback_stage(job, "terminate_end", lambda: st.hook(job, "terminate_end", rollback=True))


async def _rollback_scale(st: Stages, job: Job, infra: InfraDriver) -> None:
    plan = job.plan
    before = set(plan["before_ids"])
    if not job.done("infra_update"):
        # The infrastructure step may have partly run: look at what exists now.
        job.inst.resources = await infra.current(st.infra_ctx(job))
    added = [v for v in job.inst.resources.vnfcs if v.id not in before]
    bare = {v.id for v in added if v.never_built}
    if bare:
        # Nothing to undo on the node side for these; the infrastructure step removes them below.
        st.progress(job, f"rolling back: VNFC(s) {', '.join(sorted(bare))} never got a server or address")
        job.inst.resources.vnfcs = [v for v in job.inst.resources.vnfcs if v.id not in bare]
    built = [v for v in added if v.id not in bare]
    await st.rollback_stage(job, "scale_start",
                            lambda: st.hook(job, "scale_start", rollback=True, removed=built))

    async def shrink() -> None:
        st.progress(job, f"rolling back: removing {len(added)} added VNFC(s)")
        job.inst.resources = await infra.update(st.infra_ctx(job), plan["counts_before"], [v.id for v in added])
        job.occ.resource_changes = {}
        job.inst.scale_levels = dict(plan["old_levels"])

    await st.rollback_stage(job, "infra_update", shrink)
    await st.rollback_stage(job, "scale_end", lambda: st.hook(job, "scale_end", rollback=True, removed=built))


async def _rollback_scale_in(st: Stages, job: Job, infra: InfraDriver) -> None:
    """The VMs of the VNFCs being removed must all still exist; they go back into service."""
    kept = plan_vnfcs(job.plan.get("removed", []))
    if not job.rb_done("scale_start"):
        now = await infra.current(st.infra_ctx(job))
        gone = [v.name or v.id for v in kept
                if (cur := now.by_id(v.id)) is None or cur.never_built or cur.server_id != v.server_id]
        if job.done("scale_start") or job.done("infra_update") or gone:
            raise OperationFailed(f"VNFC(s) {', '.join(gone) or 'all'} were already removed and cannot be "
                                  "restored; retry or fail")
        st.progress(job, f"rolling back: VNFC(s) {', '.join(v.name or v.id for v in kept)} stay in service")
    await st.rollback_stage(job, "scale_start",
                            lambda: st.hook(job, "scale_start", rollback=True, restored=kept))
    job.occ.resource_changes = {}
    job.inst.scale_levels = dict(job.plan["old_levels"])
