"""Scheduled etcd backups on the simulated cloud: a snapshot taken on a master, copied into the
VNFM's store (bounded), restored by the drill into a throw-away simulated etcd with its keys
compared; the result in the API, the metrics and `vnf show`; one process per instance and period;
off by default; an instance an operation holds is left alone; a failure is recorded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi.testclient import TestClient

from vnfm.adapters.infra.simulator.twin.upgrade import etcd_keys
from vnfm.bootstrap import App
from vnfm.domain.errors import VnfmError
from vnfm.entrypoints.api.app import create_app
from vnfm.entrypoints.cli.render import render_backups
from vnfm.service.backups import BackupSchedule, view

from .conftest import PARAMS, K8s

BACKED_UP = {**PARAMS, "etcd_backup": {"interval": 600, "keep": 2}}


def _schedule(app: App) -> BackupSchedule:
    assert app.backups is not None
    return app.backups


def _row(app: App, inst_id: str) -> dict[str, Any]:
    row = app.extras["etcd_backups"].get(inst_id)
    assert row is not None
    return dict(row)


async def test_backup_copied_off_bounded_and_drilled(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("ha", BACKED_UP)
    k8s.twin(inst_id).add_pod("web-1", "workernode-0", labels={"app": "web"})
    sched, now = _schedule(app), [1_900_000_000.0]
    sched.clock = lambda: now[0]
    assert await sched.round() == 1
    row = _row(app, inst_id)
    ok = row["last_ok"]
    keys = len(etcd_keys(k8s.state(inst_id)))
    assert ok["ok"] and ok["keys"] == keys > 0 and ok["host"] == "masternode-0"
    assert ok["drill"]["ok"] and ok["drill"]["keys"] == keys  # restored into a throw-away etcd, keys compared
    stored = app.settings.data_dir / "etcd-backups" / inst_id / ok["name"]
    assert stored.stat().st_size == ok["size"] and stored.stat().st_mode & 0o777 == 0o600
    assert row["next_at"] == now[0] + 600
    assert await sched.round() == 0  # not due yet
    for _ in range(2):  # two more periods: the store keeps 2, the master's directory too
        now[0] += 601
        assert await sched.round() == 1
    assert len(list(stored.parent.iterdir())) == 2
    snaps = k8s.state(inst_id)["hosts"]
    on_master = [p for h in snaps.values() for p in (h.get("snapshots") or {}) if "/scheduled/" in p]
    assert len(on_master) == 2

    row = _row(app, inst_id)
    shown = view(inst_id, row, now=row["last_ok"]["at"] + 30)  # the snapshot's own time, not the schedule's
    assert shown["lastBackup"]["ageSeconds"] == 30 and shown["lastDrill"]["result"] == "OK"
    line = render_backups(shown)
    assert "etcd backup: newest" in line and "0m30s old" in line and "restore drill OK" in line
    client = TestClient(_api(app))
    body = client.get(f"/vnfm/v1/vnf_instances/{inst_id}/backups").json()
    assert body["lastBackup"]["keys"] == keys and body["lastDrill"]["result"] == "OK"
    metrics = app.metrics.render().decode()
    assert f'vnfm_etcd_backup_drill_last_result{{vnf_instance_id="{inst_id}"}} 1.0' in metrics
    assert f'vnfm_etcd_backup_last_result{{vnf_instance_id="{inst_id}"}} 1.0' in metrics
    assert "vnfm_etcd_backup_age_seconds{" in metrics


def _api(app: App) -> Any:
    return create_app(app.settings, vnfm_app=app)


async def test_one_process_per_instance_off_by_default_busy_left_alone(k8s: K8s) -> None:
    app = k8s.app
    on, _ = await k8s.instantiate("ha", BACKED_UP)
    off, _ = await k8s.instantiate("ha")  # no etcd_backup and the setting's interval 0: never backed up
    a = _schedule(app)
    b = BackupSchedule(a.store, a.get_instance, a.res, a.policy, "other-process", clock=lambda: 1_900_000_000.0)
    a.clock = lambda: 1_900_000_000.0
    done = await asyncio.gather(a.round(), b.round())
    assert sorted(done) == [0, 1]  # each instance claimed by one of the two processes
    assert _row(app, off).get("last") is None and _row(app, on)["last"]["ok"]

    def hold(inst_id: str) -> None:
        with app.uow() as u:
            inst = u.instances.get(inst_id)
            assert inst is not None and inst.lock_op_id is None
            inst.lock_op_id = "some-operation"
            u.instances.save(inst)
            u.commit()

    hold(on)
    a.clock = lambda: 1_900_001_000.0
    before = _row(app, on)["last"]
    assert await a.round() == 0
    assert _row(app, on)["last"] == before and _row(app, on)["next_at"] == 1_900_001_000.0 + a.policy.busy_retry


async def test_failed_backup_recorded(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("ha", BACKED_UP)

    def sick(st: dict[str, Any]) -> None:
        for m in st["etcd"]["members"].values():
            m["healthy"] = False

    k8s.twin(inst_id).tx(sick)
    sched = _schedule(app)
    assert await sched.round() == 1
    row = _row(app, inst_id)
    assert row["last"]["ok"] is False and "etcd is not healthy" in row["last"]["reason"]
    assert row.get("last_ok") is None
    shown = view(inst_id, row)
    assert shown["lastAttempt"]["result"] == "FAILED" and "FAILED" in render_backups(shown)
    assert f'vnfm_etcd_backup_last_result{{vnf_instance_id="{inst_id}"}} 0.0' in app.metrics.render().decode()


async def test_schedule_refused_outside_instantiate_and_checked(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("ha", BACKED_UP)
    with pytest.raises(VnfmError, match="additionalParams.etcd_backup"):
        app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                      "additionalParams": {"etcd_backup": {"interval": 900}}})
    bad = app.instances.create({"vnfdId": k8s.vnfd_id})
    with pytest.raises(VnfmError, match="etcd_backup.interval"):
        app.instances.instantiate(bad.id, {"flavourId": "ha",
                                           "additionalParams": {**PARAMS, "etcd_backup": {"interval": 10}}})
