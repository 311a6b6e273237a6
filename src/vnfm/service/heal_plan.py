"""What a heal request will do, decided once when it arrives and stored in the occurrence's plan:
replace the servers of the VNFCs it names, rebuild the entire VNF, or (`additionalParams.
renew_certificates: true`, a vnfm extension of SOL003 HealVnfRequest) renew the cluster's
certificates in place, replacing nothing: the VNF's management driver renews them in `heal_end`,
and it must be one that does (`MgmtDriver.renews_certificates`), else the request is refused."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import OpOcc, VnfInstance
from vnfm.domain.scaling import target_counts
from vnfm.domain.vnfd import Flavour

RENEW = "renew_certificates"


def plan(req: Any, inst: VnfInstance, occ: OpOcc, flavour: Flavour, *, mgmt: Any, vims: Any,
         note: Callable[[OpOcc, str], None]) -> None:
    extra = req.additionalParams or {}
    if extra.get(RENEW) is True:
        _renewal(req, inst, occ, flavour, mgmt)
    elif req.vnfcInstanceId:
        unknown = [i for i in req.vnfcInstanceId if inst.resources.by_id(i) is None]
        if unknown:
            raise UnprocessableEntity(f"vnfcInstanceId {', '.join(unknown)} is not a VNFC of VNF instance {inst.id}")
        ids = list(dict.fromkeys(req.vnfcInstanceId))
        occ.plan.update(
            entire=False,
            vnfc_ids=ids,
            old=[dataclasses.asdict(inst.resources.by_id(i)) for i in ids],  # type: ignore[arg-type]
            keep_storage=not bool(extra.get("all", False)),
        )
    else:
        deps = vims.dependents(inst.id)
        if deps:
            note(occ, f"warning: CNF instance(s) {', '.join(d.label for d in deps)} run on this "
                      "cluster's Kubernetes VIM: heal entire rebuilds the cluster without their "
                      "workloads and does not re-apply them; heal each of them (entire) afterwards")
        occ.plan.update(
            entire=True,
            old=[dataclasses.asdict(v) for v in inst.resources.vnfcs],
            counts=target_counts(flavour, inst.instantiation_level_id, inst.scale_levels),
        )


def _renewal(req: Any, inst: VnfInstance, occ: OpOcc, flavour: Flavour, mgmt: Any) -> None:
    if req.vnfcInstanceId:
        raise UnprocessableEntity(f"additionalParams.{RENEW}: a renewal covers every control plane of the cluster, "
                                  "one at a time; leave vnfcInstanceId out")
    if (req.additionalParams or {}).get("all"):
        raise UnprocessableEntity(f"additionalParams.all: a {RENEW} heal replaces no VNFC and so no volume")
    driver = mgmt.for_hook(flavour, "heal_end")
    if driver is None or not getattr(driver, "renews_certificates", False):
        name = f"management driver '{driver.name}'" if driver is not None else "no management driver"
        raise UnprocessableEntity(f"additionalParams.{RENEW}: {name} is bound to heal_end of flavour "
                                  f"'{flavour.id}', and it does not renew certificates (kubeadm's and Kubespray's do)")
    occ.plan.update(entire=False, renew_certificates=True, vnfc_ids=[], old=[])
