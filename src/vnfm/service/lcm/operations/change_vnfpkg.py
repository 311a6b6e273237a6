"""change_vnfpkg (SOL003 5.4.11a): the VNF moves to another package of the same product. For a
Kubernetes cluster the management driver upgrades it, in stages (each checkpointed, `ctx.phase`):
an etcd snapshot, the control plane one node at a time, the workers one at a time; then the
instance's records switch to the new package (vnfdId last). Its rollback undoes as far as the
operation went (the driver: nodes back, etcd restored when the control plane had moved), then
puts the records back."""

from __future__ import annotations

from typing import Any

from vnfm.service.lcm.job import Job
from vnfm.service.lcm.stages import Stages

PHASES = (("snapshot", "change_current_package_start"), ("control_plane", "change_current_package_start"),
          ("workers", "change_current_package_end"))
RECORDS = ("vnfd_id", "vnf_pkg_id", "vnf_provider", "vnf_product_name", "vnf_software_version", "vnfd_version",
           "additional_params")


def _hook_stage(st: Stages, job: Job, hook: str, phase: str, rollback: bool = False) -> Any:
    return lambda: st.hook(job, hook, phase=phase, rollback=rollback)


async def change_vnfpkg(st: Stages, job: Job) -> None:
    for phase, hook in PHASES:
        await st.stage(job, f"upgrade_{phase}", _hook_stage(st, job, hook, phase))

    async def switch() -> None:
        new = job.plan["new"]
        st.progress(job, f"the VNF now runs package {new['vnf_pkg_id']} (vnfdId {new['vnfd_id']}, descriptor "
                         f"version {new['vnfd_version']})")
        _apply(job, new)
        # SOL003 VnfInfoModifications: what the change changed in the VnfInstance
        job.occ.changed_info = {"vnfdId": new["vnfd_id"], "vnfProvider": new["vnf_provider"],
                                "vnfProductName": new["vnf_product_name"],
                                "vnfSoftwareVersion": new["vnf_software_version"],
                                "vnfdVersion": new["vnfd_version"]}

    await st.stage(job, "switch_package", switch)


async def rollback_change_vnfpkg(st: Stages, job: Job) -> None:
    plan = job.plan
    # the furthest phase that started in any attempt: recorded before any undo, and kept over a
    # retry after a partial rollback (that retry's own stages may not reach as far as the first
    # attempt's nodes went; a retry that goes further moves it on)
    names = [p for p, _ in PHASES]
    started = [p for p in names if f"upgrade_{p}" in plan["done"] or plan.get("current") == f"upgrade_{p}"]
    known = [p for p in (plan.get("rb_phase"), *started[-1:]) if p in names]
    plan["rb_phase"] = max(known, key=names.index) if known else ""
    await st.rollback_stage(job, "change_current_package_start",
                            _hook_stage(st, job, "change_current_package_start", plan["rb_phase"], True))

    async def restore() -> None:
        st.progress(job, f"rolling back: the VNF's records back to package {plan['old']['vnf_pkg_id']}")
        _apply(job, plan["old"])
        job.occ.changed_info = None

    await st.rollback_stage(job, "switch_package", restore)


def _apply(job: Job, records: dict[str, Any]) -> None:
    for key in RECORDS:
        setattr(job.inst, key, records[key])


def records_of(inst: Any) -> dict[str, Any]:
    return {key: getattr(inst, key) for key in RECORDS}
