"""A Kubespray cluster's certificates (issue 27 item 1): its layout's dates are read on the masters
and stored; a renew_certificates HEAL renews the kubeadm-managed ones one master at a time (its own
etcd certificates are left), re-installs the LB's kubeconfig and updates the VIM in place."""

from __future__ import annotations

from tests.unit.kubespray.conftest import Ks


async def test_dates_read_and_renewed_in_place(ks: Ks) -> None:
    app = ks.app
    twin = app.extras["twin"]
    inst_id, _ = await ks.instantiate()
    certs = app.instances.get(inst_id).driver_state["kubespray"]["certificates"]
    assert certs["layout"] == "kubespray"
    (node, dates), = certs["nodes"].items()
    assert {"apiserver", "etcd-member", "apiserver-etcd-client", "admin.conf", "ca"} <= set(dates)
    vim_before = app.vims.get(app.instances.get(inst_id).driver_state["kubespray"]["vim_id"])
    assert vim_before is not None

    twin.cert_validity_s *= 2
    occ = await ks.done(app.instances.heal(inst_id, {"additionalParams": {"renew_certificates": True}}))
    after = app.instances.get(inst_id).driver_state["kubespray"]["certificates"]["nodes"][node]
    assert after["apiserver"] > dates["apiserver"] and after["admin.conf"] > dates["admin.conf"]
    assert after["etcd-member"] == dates["etcd-member"]  # Kubespray's etcd certificates are not kubeadm's
    assert twin.observed["max_renewals_in_flight"] == 1
    messages = " | ".join(ks.messages(occ))
    assert "renewing the certificates of control plane" in messages and "updated in place" in messages
    vim_after = app.vims.get(vim_before.id)
    assert vim_after is not None and vim_after.id == vim_before.id  # updated in place
    assert not occ.resource_changes.get("affectedVnfcs")


async def test_renewal_checks_kubesprays_etcd_between_masters(ks: Ks) -> None:
    """etcd is asked after each master's renewal with Kubespray's own client certificate (the twin
    refuses kubeadm's etcd PKI paths on a Kubespray control plane, as etcdctl would find no file):
    an unhealthy member stops the renewal before the next master."""
    app = ks.app
    inst_id, _ = await ks.instantiate()
    with app.sim.edit_extras(inst_id) as ex:
        (member,) = ex["k8s"]["etcd"]["members"].values()
        member["healthy"] = False
    occ = await ks.wait(app.instances.heal(inst_id, {"additionalParams": {"renew_certificates": True}}))
    assert occ.operation_state.value == "FAILED_TEMP"
    assert "etcd is not healthy" in str(occ.error), occ.error
