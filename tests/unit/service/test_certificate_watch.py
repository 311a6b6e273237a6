"""The certificate watch's decisions (service/certificates.py) over a fake store: warn once per
expiry date, renew once per expiry date (a busy instance is tried again at its next check), one
instance's trouble does not stop the others, an instance without recorded dates is left alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.unit.db import factories as f
from vnfm.domain.certificates import WatchRow
from vnfm.domain.errors import Conflict
from vnfm.domain.model import VnfInstance
from vnfm.service.certificates import DAY, CertificateWatch, WatchPolicy, view

NOW = 1_000_000_000.0


class Store:
    def __init__(self, ids: list[str]) -> None:
        self.rows = {i: WatchRow(i) for i in ids}
        self.recorded: dict[str, dict[str, float]] = {}
        self.next_check: dict[str, float] = {}  # what a check asked for (sooner than the period)

    def claim(self, owner: str, now: float, every: float, limit: int = 100) -> list[WatchRow]:
        return list(self.rows.values())

    def record(self, inst_id: str, certs: Mapping[str, float], *, warned_for: float | None = None,
               renew_for: float | None = None, next_check: float | None = None) -> None:
        self.recorded[inst_id] = dict(certs)
        if next_check is None:
            self.next_check.pop(inst_id, None)
        else:
            self.next_check[inst_id] = next_check
        old = self.rows[inst_id]
        self.rows[inst_id] = WatchRow(inst_id, warned_for if warned_for is not None else old.warned_for,
                                      renew_for if renew_for is not None else old.renew_for)


def _cluster(days_left: float) -> VnfInstance:
    inst = f.instance()
    t = NOW + days_left * DAY
    inst.driver_state = {"kubeadm": {"certificates": {"layout": "kubeadm", "checked_at": NOW, "nodes": {
        "master-0": {"apiserver": t, "ca": NOW + 3650 * DAY}, "master-1": {"apiserver": t + DAY}}}}}
    return inst


def test_warns_and_renews_once_per_expiry_date() -> None:
    soon, later, bare, broken = _cluster(20), _cluster(60), f.instance(), _cluster(1)
    insts = {i.id: i for i in (soon, later, bare)}
    store = Store([soon.id, later.id, bare.id, broken.id])
    notes: list[dict[str, Any]] = []
    renewals: list[str] = []
    busy = {"first": True}

    def get(inst_id: str) -> VnfInstance | None:
        if inst_id == broken.id:
            raise RuntimeError("the database hiccuped")
        return insts.get(inst_id)

    def renew(inst_id: str) -> Any:
        if busy.pop("first", False):
            raise Conflict("another operation runs")
        renewals.append(inst_id)
        return None

    watch = CertificateWatch(store, get, lambda inst, body: notes.append(body), renew,
                             WatchPolicy(60, 45 * DAY, 30 * DAY, auto_renew=True), "p1", clock=lambda: NOW)
    assert watch.round() == 4
    assert [n["vnfInstanceId"] for n in notes] == [soon.id]  # 20 days left: warned; 60: not yet
    assert notes[0]["certificates"] == [{"name": "apiserver", "notAfter": notes[0]["earliestNotAfter"]}]
    assert renewals == []  # busy: not recorded as started, so tried again
    assert store.recorded[soon.id]["apiserver"] == NOW + 20 * DAY and bare.id not in store.recorded
    watch.round()
    assert len(notes) == 1 and renewals == [soon.id]
    watch.round()
    assert len(notes) == 1 and renewals == [soon.id]  # once per expiry date
    assert view(soon, NOW)["earliest"] == {"node": "master-0", "name": "apiserver",
                                           "notAfter": notes[0]["earliestNotAfter"], "daysLeft": 20.0}
    assert view(bare)["known"] is False
