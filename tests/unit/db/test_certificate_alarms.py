"""The certificate watch's VNF FM alarms (service/fm/cert_alarms.py through AlarmService), on SQLite
and PostgreSQL: WARNING within the warning threshold, the same alarm escalated to MAJOR within a
week, replaced by a CRITICAL `KUBERNETES_CERTIFICATE_EXPIRED` one once expired, cleared once the
dates move (a renewal); the health watcher's reconciliation leaves them alone; an instance with an
open certificate alarm is checked again within a tenth of the period; processes sharing the
database raise one alarm (the watch's claim); the per-instance automatic renewal switch overrides
the global one both ways."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from tests.unit.db import factories as f
from tests.unit.service.test_certificate_watch import NOW, Store
from vnfm.adapters.db.certificates import SqlCertificateWatch
from vnfm.adapters.db.uow import SqlAlchemyUnitOfWork
from vnfm.domain.alarms import CAUSE_CERT_EXPIRED, CAUSE_CERT_EXPIRING, CERT_CAUSES, PerceivedSeverity
from vnfm.domain.model import InstantiationState, VnfInstance
from vnfm.service.certificates import DAY, CertificateWatch, WatchPolicy
from vnfm.service.fm.alarms import AlarmService, Finding

Uow = Callable[[], SqlAlchemyUnitOfWork]


def _dates(inst: VnfInstance, days_left: float) -> None:
    t = NOW + days_left * DAY
    inst.driver_state = {"kubeadm": {"certificates": {"layout": "kubeadm", "checked_at": NOW, "nodes": {
        "master-0": {"apiserver": t, "admin.conf": t + DAY, "ca": NOW + 3650 * DAY}}}}}


def _watch(store: Store, inst: VnfInstance, alarms: AlarmService, renewals: list[str], auto: bool = False
           ) -> CertificateWatch:
    def alarm(i: VnfInstance, found: dict[str, Finding | None]) -> None:
        alarms.record(i.id, i.tenant, found, CERT_CAUSES, replace=True)

    return CertificateWatch(store, lambda _id: inst, lambda i, body: None, renewals.append,
                            WatchPolicy(60, 45 * DAY, 30 * DAY, auto_renew=auto), "p1", clock=lambda: NOW,
                            alarm=alarm)


def test_expiry_alarm_escalates_is_replaced_when_expired_and_cleared_by_renewal(uow: Uow) -> None:
    inst = f.instance()
    _dates(inst, 40)
    alarms = AlarmService(uow)
    store = Store([inst.id])
    watch = _watch(store, inst, alarms, [])
    watch.round()
    (a,) = alarms.open_for(inst.id)
    assert (a.vnfc_id, a.probable_cause, a.perceived_severity, a.fault_type) == (
        "vnfc-1", CAUSE_CERT_EXPIRING, PerceivedSeverity.WARNING, "apiserver")
    assert len(a.fault_details) == 2 and "certificate apiserver expires on" in a.fault_details[0]
    assert a.faulty_resource == {"vimConnectionId": inst.vim_id, "resourceId": "srv-1",
                                 "vimLevelResourceType": "OS::Nova::Server"}
    assert store.next_check[inst.id] == NOW + 6  # an open alarm: checked again within a tenth of the period
    watch.round()
    assert [x.id for x in alarms.open_for(inst.id)] == [a.id]  # no duplicate at the next check
    _dates(inst, 5)
    watch.round()
    (b,) = alarms.open_for(inst.id)
    assert b.id == a.id and b.perceived_severity is PerceivedSeverity.MAJOR and b.alarm_changed_time is not None
    # the health watcher reconciles only its own causes: a healthy VNFC does not clear this alarm
    alarms.record(inst.id, inst.tenant, {"vnfc-1": None})
    _dates(inst, -1)
    watch.round()
    (c,) = alarms.open_for(inst.id)
    assert c.id != a.id and (c.probable_cause, c.perceived_severity) == (CAUSE_CERT_EXPIRED, PerceivedSeverity.CRITICAL)
    assert "certificate apiserver expired on" in c.fault_details[0]
    _dates(inst, 365)  # renewed
    watch.round()
    assert alarms.open_for(inst.id) == [] and inst.id not in store.next_check
    with uow() as u:
        kept = {x.id: x for x in u.alarms.page([], None, 10)}
    assert set(kept) == {a.id, c.id} and all(x.cleared for x in kept.values())


def test_the_instance_switch_overrides_the_global_automatic_renewal(uow: Uow) -> None:
    cases: list[tuple[bool, Any, bool]] = [(True, False, False), (False, True, True), (True, None, True),
                                           (False, None, False)]
    for global_on, switch, renews in cases:
        inst = f.instance()
        _dates(inst, 20)
        if switch is not None:
            inst.vnf_configurable_properties = {"isCertificateAutoRenewalEnabled": switch}
        renewals: list[str] = []
        _watch(Store([inst.id]), inst, AlarmService(uow), renewals, auto=global_on).round()
        assert renewals == ([inst.id] if renews else []), (global_on, switch)


def test_processes_sharing_a_database_raise_one_alarm(uow: Uow, session_factory: sessionmaker[Session]) -> None:
    inst = f.instance(instantiation_state=InstantiationState.INSTANTIATED)
    _dates(inst, 20)
    with uow() as u:
        u.instances.add(inst)
        u.commit()

    def get(inst_id: str) -> VnfInstance | None:
        with uow() as u:
            return u.instances.get(inst_id)

    clock = {"now": NOW}
    watches = []
    for p in range(4):
        alarms = AlarmService(uow)
        watches.append(CertificateWatch(
            SqlCertificateWatch(session_factory), get, lambda i, body: None, lambda _id: None,
            WatchPolicy(60, 45 * DAY, 30 * DAY), f"p{p}", clock=lambda: clock["now"],
            alarm=lambda i, found, a=alarms: a.record(i.id, i.tenant, found, CERT_CAUSES, replace=True)))
    with ThreadPoolExecutor(4) as pool:
        for step in range(3):  # each round past the recheck time: one process wins the instance
            clock["now"] = NOW + step * 7
            assert sum(pool.map(lambda w: w.round(), watches)) == 1
    with uow() as u:
        assert len(u.alarms.page([], None, 10)) == 1
