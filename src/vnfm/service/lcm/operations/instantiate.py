"""Instantiate: `instantiate_start` hook, deploy the VNFCs of the instantiation level,
`instantiate_end` hook (given every VNFC as added)."""

from __future__ import annotations

from vnfm.domain.model import InstantiationState, VnfState
from vnfm.domain.scaling import initial_scale_levels, target_counts
from vnfm.service.lcm.job import Job
from vnfm.service.lcm.operations.changes import affected
from vnfm.service.lcm.stages import Stages


async def instantiate(st: Stages, job: Job) -> None:
    flavour = job.flavour
    assert flavour is not None
    level = job.inst.instantiation_level_id
    if "counts" not in job.plan:
        levels = initial_scale_levels(flavour, level)
        job.plan["levels"] = levels
        job.plan["counts"] = target_counts(flavour, level, levels)
    counts: dict[str, int] = job.plan["counts"]
    infra = job.require_infra()

    await st.stage(job, "instantiate_start", lambda: st.hook(job, "instantiate_start"))

    async def deploy() -> None:
        st.progress(job, "deploying " + ", ".join(f"{n} x {vdu}" for vdu, n in sorted(counts.items())))
        job.inst.resources = await infra.deploy(st.infra_ctx(job), counts)
        job.occ.resource_changes = {}
        affected(job, job.inst.resources.vnfcs, "ADDED")

    await st.stage(job, "infra_deploy", deploy)
    await st.stage(
        job, "instantiate_end", lambda: st.hook(job, "instantiate_end", added=list(job.inst.resources.vnfcs))
    )
    job.inst.scale_levels = dict(job.plan["levels"])
    job.inst.instantiation_state = InstantiationState.INSTANTIATED
    job.inst.vnf_state = VnfState.STARTED
