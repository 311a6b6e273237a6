"""The single-master heal restoring from a scheduled backup kept in the S3-compatible store (moto's
server, as test_etcd_backups_s3.py runs it): the request-time check and the heal read the bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.infra.simulator.twin import TwinConfig
from vnfm.adapters.snapshots_s3 import S3Target
from vnfm.bootstrap import build

from .conftest import PARAMS, K8s
from .test_etcd_backups_s3 import MOTO, _settings, s3  # noqa: F401 - s3 is the module's fixture

pytestmark = pytest.mark.skipif(not MOTO.exists(), reason=f"no moto server at {MOTO} (run scripts/setup.sh)")


async def test_dead_master_restored_from_a_backup_in_the_bucket(s3: S3Target, tmp_path: Path) -> None:  # noqa: F811
    app = build(_settings(tmp_path, s3, s3.secret_key), sim=SimCloud(MemoryStateStore(), SimConfig(
        boot_time=0, api_latency=0, delete_time=0)), notifier=None, twin=TwinConfig(poll=0.002))
    await app.start()
    await app.stop_backup_schedule()  # the tests run rounds themselves: a late first round would take theirs
    try:
        k8s = K8s(app, TwinConfig(poll=0.002))
        k8s.onboard()
        inst_id, _ = await k8s.instantiate("simple", {**PARAMS, "etcd_backup": {"interval": 600, "keep": 2}})
        assert app.backups is not None and await app.backups.round() == 1
        assert not (tmp_path / "etcd-backups").exists()  # the backup is in the bucket only
        master = app.instances.get(inst_id).resources.of_vdu("masterNode")[0]
        app.sim.inject(stopped=[master.id])
        occ = await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [master.id]}))
        plan = app.instances.get(inst_id).driver_state["kubeadm"]["restore"]
        assert plan["name"].startswith("backup-") and plan["source"] == "the newest the VNFM holds"
        assert any("from etcd snapshot backup-" in e["message"] for e in app.instances.op_get(occ.id).events)
    finally:
        await app.stop()
