"""Certificate lifecycle of the clusters vnfm builds, on the simulated cloud: expiry read on every
master and stored, shown (vnf show's API, the metric), renewal in place as a HEAL occurrence with
`additionalParams.renew_certificates`, and the twin refusing admin.conf use once expired."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, ApiFactory

DAY = 86400.0


def _certs(inst: dict[str, Any]) -> dict[str, Any]:
    return dict(inst["_state"]) if "_state" in inst else {}


async def test_expiry_read_renewed_in_place(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(sim_cert_validity=40 * DAY)
    _, vnfd_id = await api.onboard()
    inst_id = await api.instantiated(vnfd_id)
    core = api.core
    stored = core.instances.get(inst_id).driver_state["kubeadm"]["certificates"]
    assert stored["layout"] == "kubeadm"
    (node, certs), = stored["nodes"].items()
    assert {"apiserver", "admin.conf", "etcd-server", "etcd-peer", "front-proxy-client",
            "apiserver-kubelet-client", "super-admin.conf", "ca"} <= set(certs)
    before = certs["apiserver"]
    occ = await api.run(inst_id, "heal", {"additionalParams": {"renew_certificates": True}})
    assert occ["operation"] == "HEAL"
    after = core.instances.get(inst_id).driver_state["kubeadm"]["certificates"]["nodes"][node]
    assert after["apiserver"] >= before and after["ca"] == certs["ca"]
