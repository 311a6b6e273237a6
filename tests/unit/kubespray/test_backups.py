"""Scheduled etcd backups of a Kubespray cluster on the simulated cloud: etcd runs on the masters as a
systemd unit with Kubespray's certificates (/etc/ssl/etcd/ssl/admin-<node>.pem): the snapshot is
taken there with them, copied into the VNFM's store, drilled; the twin refuses another layout's or
another node's certificate as etcdctl would (no such file); the schedule is instantiate's only."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.adapters.infra.simulator.twin import etcd_tls
from vnfm.adapters.infra.simulator.twin.upgrade import etcd_keys
from vnfm.adapters.mgmt.cluster.etcd import ETCD_TLS
from vnfm.adapters.mgmt.kubespray.upgrade import etcd_tls as kubespray_tls
from vnfm.domain.errors import VnfmError
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.certs import KUBEADM, KUBESPRAY
from vnfm.nodesteps.etcd import EtcdTls
from vnfm.nodesteps.upgrade import EtcdSnapshotSave
from vnfm.service.backups import view

from .conftest import Ks, params


async def test_kubespray_backup_taken_with_its_etcd_certificates_and_drilled(ks: Ks) -> None:
    app = ks.app
    inst_id, _ = await ks.instantiate({**params(), "etcd_backup": {"interval": 900, "keep": 2}})
    assert app.backups is not None
    sched, now = app.backups, [1_900_000_000.0]
    sched.clock = lambda: now[0]
    assert await sched.round() == 1
    row = app.extras["etcd_backups"].get(inst_id)
    ok = row["last_ok"]
    st = dict(app.sim.extras(inst_id).get("k8s") or {})
    assert ok["ok"] and ok["host"] == "masternode-0" and ok["keys"] == len(etcd_keys(st)) > 0
    assert ok["drill"]["ok"] and ok["drill"]["keys"] == ok["keys"]
    stored = app.settings.data_dir / "etcd-backups" / inst_id / ok["name"]
    assert stored.stat().st_size == ok["size"]
    assert row["next_at"] == now[0] + 900
    for _ in range(2):
        now[0] += 901
        assert await sched.round() == 1
    assert len(list(stored.parent.iterdir())) == 2  # keep 2
    shown = view(inst_id, app.extras["etcd_backups"].get(inst_id))
    assert shown["lastBackup"]["host"] == "masternode-0" and shown["lastDrill"]["result"] == "OK"
    assert f'vnfm_etcd_backup_drill_last_result{{vnf_instance_id="{inst_id}"}} 1.0' in app.metrics.render().decode()

    with pytest.raises(VnfmError, match="additionalParams.etcd_backup"):
        app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                      "additionalParams": {"etcd_backup": {"interval": 900}}})
    bad = app.instances.create({"vnfdId": ks.vnfd_id})
    with pytest.raises(VnfmError, match="etcd_backup.keep"):
        app.instances.instantiate(bad.id, {"flavourId": "simple",
                                           "additionalParams": {**params(), "etcd_backup": {"interval": 900,
                                                                                            "keep": 50}}})


def test_twin_checks_the_client_certificate_as_etcdctl_finds_it() -> None:
    step = EtcdSnapshotSave(path="/var/lib/vnfm/etcd-snapshots/x.db")

    def st(layout: str) -> dict[str, Any]:
        return {"hosts": {"s1": {"certs": {"layout": layout, "not_after": {}}}}}

    class M:  # the Node fields etcd_tls reads
        name = "master-1"

    etcd_tls.check("h", step, st(KUBESPRAY), "s1", "master-1", kubespray_tls(M()))  # type: ignore[arg-type]
    etcd_tls.check("h", step, st(KUBEADM), "s1", "master-1", ETCD_TLS)
    with pytest.raises(StepFailed, match="open /etc/kubernetes/pki/etcd/ca.crt: no such file"):
        etcd_tls.check("h", step, st(KUBESPRAY), "s1", "master-1", ETCD_TLS)
    with pytest.raises(StepFailed, match="admin-master-1.pem: no such file"):
        etcd_tls.check("h", step, st(KUBESPRAY), "s1", "master-2", kubespray_tls(M()))  # type: ignore[arg-type]
    with pytest.raises(StepFailed, match="does not match"):
        d = "/etc/ssl/etcd/ssl"
        etcd_tls.check("h", step, st(KUBESPRAY), "s1", "master-1",
                       EtcdTls(f"{d}/ca.pem", f"{d}/admin-master-1.pem", f"{d}/node-master-1-key.pem"))
