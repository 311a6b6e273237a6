"""Scale: `scale_start` hook (given the VNFCs a scale-in removes, decided when the request
arrived), the infrastructure update to the target counts, `scale_end` hook (given the VNFCs added)."""

from __future__ import annotations

from vnfm.service.lcm.job import Job, plan_vnfcs
from vnfm.service.lcm.operations.changes import affected
from vnfm.service.lcm.stages import Stages


async def scale(st: Stages, job: Job) -> None:
    flavour = job.flavour
    assert flavour is not None
    infra = job.require_infra()
    plan = job.plan
    scale_out = plan["type"] == "SCALE_OUT"
    removed = plan_vnfcs(plan.get("removed", []))

    await st.stage(job, "scale_start", lambda: st.hook(job, "scale_start", removed=removed))

    async def update() -> None:
        before = set(plan["before_ids"])
        verb = "adding" if scale_out else "removing"
        target = ", ".join(f"{v}={n}" for v, n in sorted(plan["counts"].items()))
        st.progress(job, f"{verb} VNFCs: target {target}")
        job.inst.resources = await infra.update(st.infra_ctx(job), plan["counts"], plan.get("remove", []))
        added = [v for v in job.inst.resources.vnfcs if v.id not in before]
        plan["added"] = [v.id for v in added]
        job.occ.resource_changes = {}
        affected(job, added, "ADDED")
        affected(job, removed, "REMOVED")
        job.inst.scale_levels = dict(plan["new_levels"])

    await st.stage(job, "infra_update", update)
    added_now = [v for v in job.inst.resources.vnfcs if v.id in set(plan.get("added", []))]
    await st.stage(job, "scale_end", lambda: st.hook(job, "scale_end", added=added_now, removed=removed))
