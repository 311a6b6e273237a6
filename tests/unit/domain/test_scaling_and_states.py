import pytest

from vnfm.domain import lcm
from vnfm.domain.errors import Conflict, UnprocessableEntity
from vnfm.domain.model import InstantiationState, LcmOperation, OpOcc, OpState, VnfInstance
from vnfm.domain.scaling import base_counts, initial_scale_levels, scaled_levels, target_counts
from vnfm.domain.vnfd import Flavour, InstantiationLevel, ScalingAspect, Vdu


def flavour() -> Flavour:
    return Flavour(
        id="simple",
        vdus={
            "masterNode": Vdu("masterNode", "master", min_instances=1, max_instances=3),
            "workerNode": Vdu("workerNode", "worker", min_instances=2, max_instances=6),
        },
        aspects={
            "master_instance": ScalingAspect("master_instance", max_scale_level=2, step_deltas=("delta_1",)),
            "worker_instance": ScalingAspect("worker_instance", max_scale_level=4, step_deltas=("delta_1",)),
        },
        aspect_deltas={
            "master_instance": {"delta_1": {"masterNode": 1}},
            "worker_instance": {"delta_1": {"workerNode": 1}},
        },
        initial_deltas={"masterNode": 1, "workerNode": 2},
        instantiation_levels={
            "instantiation_level_1": InstantiationLevel(
                "instantiation_level_1", scale_levels={"master_instance": 0, "worker_instance": 0},
                vdu_counts={"masterNode": 1, "workerNode": 2}),
            "instantiation_level_2": InstantiationLevel(
                "instantiation_level_2", scale_levels={"master_instance": 0, "worker_instance": 2},
                vdu_counts={"masterNode": 1, "workerNode": 4}),
        },
        default_level="instantiation_level_1",
    )


def test_counts_from_levels_and_scaling():
    f = flavour()
    assert target_counts(f, None, initial_scale_levels(f, None)) == {"masterNode": 1, "workerNode": 2}
    lvl2 = initial_scale_levels(f, "instantiation_level_2")
    assert lvl2["worker_instance"] == 2
    # level 2 is 4 workers at worker scale level 2, so its base is 2 and scaling adds to it
    assert base_counts(f, "instantiation_level_2")["workerNode"] == 2
    assert target_counts(f, "instantiation_level_2", lvl2) == {"masterNode": 1, "workerNode": 4}
    new = scaled_levels(f, lvl2, "worker_instance", 2, True)
    assert target_counts(f, "instantiation_level_2", new)["workerNode"] == 6


def test_scaling_limits_are_named():
    f = flavour()
    with pytest.raises(UnprocessableEntity, match="max_scale_level 4"):
        scaled_levels(f, {"worker_instance": 3}, "worker_instance", 2, True)
    with pytest.raises(UnprocessableEntity, match="below level 0"):
        scaled_levels(f, {"worker_instance": 0}, "worker_instance", 1, False)
    with pytest.raises(UnprocessableEntity, match="aspectId 'nope'"):
        scaled_levels(f, {}, "nope", 1, True)
    with pytest.raises(UnprocessableEntity, match="vdu_profile"):
        target_counts(f, None, {"master_instance": 2, "worker_instance": 9})


def test_state_machine():
    occ = OpOcc(vnf_instance_id="i", operation=LcmOperation.INSTANTIATE)
    lcm.transition(occ, OpState.PROCESSING)
    with pytest.raises(Conflict, match="PROCESSING; it cannot go to ROLLED_BACK"):
        lcm.transition(occ, OpState.ROLLED_BACK)
    lcm.transition(occ, OpState.FAILED_TEMP, error={"detail": "x"})
    assert occ.error == {"detail": "x"}
    lcm.check_task(occ, "rollback")
    lcm.transition(occ, OpState.ROLLING_BACK)
    with pytest.raises(Conflict, match="needs FAILED_TEMP"):
        lcm.check_task(occ, "retry")
    lcm.transition(occ, OpState.ROLLED_BACK)
    assert occ.is_final


def test_rollback_not_for_scale_in_past_its_removal_or_heal():
    occ = OpOcc(vnf_instance_id="i", operation=LcmOperation.SCALE, operation_params={"type": "SCALE_IN"})
    occ.operation_state = OpState.FAILED_TEMP
    lcm.check_task(occ, "rollback")  # nothing removed yet: the nodes go back into service
    for done in (["scale_start"], ["scale_start", "infra_update"]):
        occ.plan["done"] = done
        with pytest.raises(Conflict, match="SCALE_IN"):
            lcm.check_task(occ, "rollback")
    occ = OpOcc(vnf_instance_id="i", operation=LcmOperation.HEAL)
    occ.operation_state = OpState.FAILED_TEMP
    with pytest.raises(Conflict, match="not supported for HEAL"):
        lcm.check_task(occ, "rollback")
    lcm.check_task(occ, "retry")


def test_one_operation_at_a_time_and_state_preconditions():
    inst = VnfInstance()
    lcm.check_can_start(inst, LcmOperation.INSTANTIATE)
    with pytest.raises(Conflict, match="NOT_INSTANTIATED"):
        lcm.check_can_start(inst, LcmOperation.SCALE)
    inst.lock_op_id = "op-1"
    with pytest.raises(Conflict, match="op-1"):
        lcm.check_can_start(inst, LcmOperation.INSTANTIATE)
    inst.lock_op_id = None
    inst.instantiation_state = InstantiationState.INSTANTIATED
    with pytest.raises(Conflict, match="already INSTANTIATED"):
        lcm.check_can_start(inst, LcmOperation.INSTANTIATE)
    with pytest.raises(Conflict, match="terminate it"):
        lcm.check_can_delete(inst)



def test_a_retry_after_a_partial_rollback_makes_a_later_rollback_start_over():
    """A rollback that stopped half-way (FAILED_TEMP again) recorded the stages it undid; a retry
    may redo them (a scale-out's infra_update adds a VNFC again), so a later rollback must not skip
    them (the pause campaign, seed 42: a VNFC added by such a retry was never removed)."""
    occ = OpOcc(vnf_instance_id="i", operation=LcmOperation.SCALE, operation_params={"type": "SCALE_OUT"})
    lcm.transition(occ, OpState.PROCESSING)
    lcm.transition(occ, OpState.FAILED_TEMP, error={"detail": "x"})
    lcm.transition(occ, OpState.ROLLING_BACK)
    occ.plan["rb_done"] = ["scale_start", "infra_update"]
    lcm.transition(occ, OpState.FAILED_TEMP, error={"detail": "rollback interrupted"})
    lcm.transition(occ, OpState.ROLLING_BACK)  # a rollback again goes on where it stopped
    assert occ.plan["rb_done"] == ["scale_start", "infra_update"]
    lcm.transition(occ, OpState.FAILED_TEMP, error={"detail": "rollback interrupted"})
    lcm.check_task(occ, "retry")
    occ.plan["done"] = ["scale_start", "infra_update"]
    lcm.transition(occ, OpState.PROCESSING)
    assert occ.plan["rb_done"] == [] and occ.plan["done"] == []


@pytest.mark.parametrize(("current", "cleared"), [("rollback:change_current_package_start", True),
                                                   ("upgrade_workers", False)])
def test_a_retry_after_a_rollback_killed_in_its_first_stage_runs_every_stage_again(current: str,
                                                                                  cleared: bool) -> None:
    """A rollback that died inside its first stage recorded no stage undone (`rb_done` empty), but
    its hook may have undone forward stages: a retry then runs every stage again (the PostgreSQL
    pause campaign, seed 62: a change_vnfpkg retried after such a rollback resumed at
    upgrade_workers on reverted control planes and failed at every later retry). A retry after a
    forward failure goes on after the last stage done."""
    occ = OpOcc(vnf_instance_id="i", operation=LcmOperation.CHANGE_VNFPKG)
    lcm.transition(occ, OpState.PROCESSING)
    occ.plan.update(done=["upgrade_snapshot", "upgrade_control_plane"], current=current, rb_done=[])
    lcm.transition(occ, OpState.FAILED_TEMP, error={"detail": "the VNFM process running this operation stopped"})
    lcm.transition(occ, OpState.PROCESSING)
    assert occ.plan["done"] == ([] if cleared else ["upgrade_snapshot", "upgrade_control_plane"])
