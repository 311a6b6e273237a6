"""What the console shows, from the records: occurrences needing an operator first, instances by
state, a cluster's node counts and version, its drivers' parts without their secrets; the
remedies of a stopped occurrence (shared with the CLI's --wait epilogue)."""

from __future__ import annotations

from datetime import timedelta

from vnfm.domain.model import InstantiationState, LcmOperation, OpOcc, OpState, VnfInstance
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.service import overview
from vnfm.service.remedies import remedies


def _occ(state: OpState, minutes: int) -> OpOcc:
    occ = OpOcc("i", LcmOperation.SCALE, operation_state=state)
    occ.state_entered_time = occ.state_entered_time - timedelta(minutes=minutes)
    return occ


def test_occurrences_needing_an_operator_come_first_newest_first() -> None:
    occs = [_occ(OpState.PROCESSING, 1), _occ(OpState.FAILED, 0), _occ(OpState.FAILED_TEMP, 9),
            _occ(OpState.FAILED_TEMP, 2)]
    ordered = overview.attention_order(occs)
    assert [o.operation_state for o in ordered] == [OpState.FAILED_TEMP, OpState.FAILED_TEMP, OpState.PROCESSING,
                                                    OpState.FAILED]
    assert ordered[0] is occs[3]  # the newer FAILED_TEMP first


def _cluster(**params: object) -> VnfInstance:
    vnfcs = [Vnfc(f"m{i}", "masterNode", f"s{i}") for i in range(3)] + [Vnfc("w0", "workerNode", "s9"),
                                                                         Vnfc("n0", "storage", "s8")]
    return VnfInstance(instantiation_state=InstantiationState.INSTANTIATED, resources=VnfResources(vnfcs=vnfcs),
                       additional_params={"k8s_cluster_installation_param": params},
                       driver_state={"kubeadm": {"master_vdus": ["masterNode"], "worker_vdus": ["workerNode"],
                                                 "vim_id": "v1", "pvs": ["pv1"]}})


def test_a_cluster_its_counts_version_and_parts_without_secrets() -> None:
    inst = _cluster(kubernetes_version="1.29.2", private_registry_connection_info=[
        {"connection_type": 1, "server": "reg:5000", "username": "u", "password": "Reg-s3cret"}])
    cluster = overview.cluster_of(inst, "1.30.4")
    assert cluster is not None
    assert (cluster.masters, cluster.workers, cluster.version, cluster.vim_id, cluster.other) == (
        3, 1, "1.29.2", "v1", {"storage": 1})
    assert overview.cluster_of(_cluster(), "1.30.4").version == "1.30.4"  # type: ignore[union-attr]
    parts = overview.driver_parts(inst)
    assert parts["registries"][0]["server"] == "reg:5000" and "Reg-s3cret" not in str(parts)
    assert parts["pvs"] == ["pv1"]
    assert overview.cluster_of(VnfInstance(), "1.30.4") is None
    assert overview.instances_by_state([inst, VnfInstance()]) == {"NOT_INSTANTIATED": 1, "INSTANTIATED": 1}


def test_remedies_of_a_stopped_occurrence() -> None:
    def actions(**op: object) -> list[tuple[str, bool]]:
        return [(r.action, r.suggested) for r in remedies({"operationState": "FAILED_TEMP", **op})]

    assert actions(operation="INSTANTIATE") == [("retry", True), ("rollback", False), ("fail", False)]
    # a request the VNFM refused: a retry repeats it, so rolling back comes first
    assert actions(operation="INSTANTIATE", error={"status": 422}) == [("rollback", True), ("retry", False),
                                                                       ("fail", False)]
    assert actions(operation="SCALE", operationParams={"type": "SCALE_IN"}) == [("retry", True), ("fail", False)]
    assert actions(operation="HEAL") == [("retry", True), ("fail", False)]
    assert [r.action for r in remedies({"operationState": "ROLLED_BACK", "operation": "SCALE"})] == [""]
    assert remedies({"operationState": "COMPLETED"}) == []
