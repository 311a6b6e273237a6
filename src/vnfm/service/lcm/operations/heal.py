"""Heal: of the whole VNF (undeploy, then deploy again with the current counts), or of the VNFCs the
request names (their servers replaced, VNFC ids, ports and addresses kept). `heal_start` /
`heal_end` hooks around either."""

from __future__ import annotations

from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.service.lcm.job import Job, plan_vnfcs
from vnfm.service.lcm.operations.changes import affected
from vnfm.service.lcm.stages import Stages
from vnfm.service.ports import InfraDriver


async def heal(st: Stages, job: Job) -> None:
    if job.plan.get("renew_certificates"):
        # in place (service/heal_plan.py): no server is replaced; the driver renews in heal_end
        st.progress(job, "renewing the cluster's certificates in place: no VNFC is replaced")
        await st.stage(job, "heal_end", lambda: st.hook(job, "heal_end"))
    elif job.plan.get("entire"):
        await _heal_entire(st, job)
    else:
        await _heal_vnfcs(st, job)


async def _heal_entire(st: Stages, job: Job) -> None:
    infra = job.require_infra()
    plan = job.plan
    old = plan_vnfcs(plan["old"])
    await st.stage(job, "heal_start", lambda: st.hook(job, "heal_start", heal_entire=True, removed=old))

    async def undeploy() -> None:
        st.progress(job, "deleting every resource of the VNF")
        await infra.undeploy(st.infra_ctx(job))
        job.inst.resources = VnfResources()

    async def redeploy() -> None:
        what = ", ".join(f"{n} x {v}" for v, n in sorted(plan["counts"].items()))
        st.progress(job, f"re-creating the VNF: {what}")
        job.inst.resources = await infra.deploy(st.infra_ctx(job), plan["counts"])
        job.occ.resource_changes = {}
        affected(job, old, "REMOVED")
        affected(job, job.inst.resources.vnfcs, "ADDED")

    await st.stage(job, "infra_undeploy", undeploy)
    await st.stage(job, "infra_deploy", redeploy)
    await st.stage(
        job, "heal_end",
        lambda: st.hook(job, "heal_end", heal_entire=True, added=list(job.inst.resources.vnfcs)),
    )


async def _heal_vnfcs(st: Stages, job: Job) -> None:
    infra = job.require_infra()
    plan = job.plan
    ids: list[str] = plan["vnfc_ids"]
    targets = plan_vnfcs(plan["old"])
    await st.stage(job, "heal_start", lambda: st.hook(job, "heal_start", healed=targets))

    async def replace() -> None:
        todo = list(ids)
        if plan.get("heal_attempted"):
            # A retry: VNFCs the failed attempt already replaced (new server, up) are not
            # replaced again; the rest are.
            todo = await _still_to_heal(st, job, infra, targets)
        else:
            plan["heal_attempted"] = True
            await st.persist(job, instance=False)
        if todo:
            st.progress(job, f"replacing the servers of {len(todo)} VNFC(s)")
            job.inst.resources = await infra.heal(st.infra_ctx(job), todo, keep_storage=plan["keep_storage"])
        else:
            job.inst.resources = await infra.current(st.infra_ctx(job))
        job.occ.resource_changes = {}
        affected(job, [v for v in job.inst.resources.vnfcs if v.id in ids], "MODIFIED")

    await st.stage(job, "infra_heal", replace)
    healed_now = [v for v in job.inst.resources.vnfcs if v.id in set(ids)]
    await st.stage(job, "heal_end", lambda: st.hook(job, "heal_end", healed=healed_now))


async def _still_to_heal(st: Stages, job: Job, infra: InfraDriver, targets: list[Vnfc]) -> list[str]:
    """The VNFCs of `targets` whose server was not yet replaced by a working one."""
    ctx = st.infra_ctx(job)
    now = await infra.current(ctx)
    todo: list[str] = []
    done: list[str] = []
    for old in targets:
        cur = now.by_id(old.id)
        replaced = cur is not None and bool(cur.server_id) and cur.server_id != old.server_id
        if replaced and cur is not None and await infra.probe(ctx, cur) is None:
            done.append(old.id)
        else:
            todo.append(old.id)
    if done:
        st.progress(job, f"already replaced by the failed attempt, kept: {', '.join(done)}")
    return todo
