"""change_vnfpkg requests (SOL003 5.4.11a ChangeCurrentVnfPkgRequest), checked before an
occurrence exists: the target package is ONBOARDED and ENABLED, of the same vnfProvider and
vnfProductName, with a newer descriptor version and the instance's flavour; the request's
attributes this VNFM does not act on in a change are refused (422 naming them); the management
drivers check their keys (a kubeadm cluster: the new Kubernetes version, one minor up)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import OpOcc, VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.service import requests as rq
from vnfm.service.lcm.operations.change_vnfpkg import records_of

if TYPE_CHECKING:
    from vnfm.service.instances import InstanceService

# attributes of the request a change does not act on here (the VNF keeps its VIM and links)
NOT_ACTED_ON = ("extVirtualLinks", "extManagedVirtualLinks", "vimConnectionInfo", "extensions",
                "vnfConfigurableProperties")
_NUMERIC = re.compile(r"^[0-9]+(\.[0-9]+)*$")


def newer(old: str, new: str) -> bool:
    """Whether descriptor version `new` is newer than `old` (dotted numbers; else refused)."""
    for v in (old, new):
        if not _NUMERIC.match(v or ""):
            raise UnprocessableEntity(f"descriptor version {v!r} is not dotted numbers: vnfm cannot tell whether "
                                      "the target package is newer")
    a, b = [int(x) for x in old.split(".")], [int(x) for x in new.split(".")]
    width = max(len(a), len(b))
    return b + [0] * (width - len(b)) > a + [0] * (width - len(a))


def merged(base: Any, extra: Any) -> Any:
    """The stored additionalParams with the request's over them, at any depth."""
    if not isinstance(base, dict) or not isinstance(extra, dict):
        return extra
    return {**base, **{k: merged(base.get(k), v) for k, v in extra.items()}}


def _check_driver(svc: InstanceService, flavour: Flavour) -> None:
    """A VNF with management drivers changes package only when one of them carries the change out
    (a driver without change_current_package hooks would leave its nodes as they are: refused)."""
    bound = {svc.mgmt.for_hook(flavour, h) for h in flavour.hooks} - {None}
    if not bound:
        return  # no management driver: the change switches the records only
    driver = svc.mgmt.for_hook(flavour, "change_current_package_start")
    if driver is None or getattr(driver, "change_current_package_start", None) is None:
        names = ", ".join(sorted(str(getattr(d, "name", d)) for d in bound))
        raise UnprocessableEntity(f"vnfdId: the VNF's management driver ({names}) does not implement "
                                  "change_vnfpkg (implemented: kubeadm and Kubespray clusters)")


def prepare(svc: InstanceService, req: rq.ChangeCurrentVnfPkgRequest, inst: VnfInstance, occ: OpOcc) -> None:
    for attr in NOT_ACTED_ON:
        if getattr(req, attr) is not None:
            raise UnprocessableEntity(f"{attr}: a change_vnfpkg here keeps the VNF's VIM, links and extensions; "
                                      "leave it out (change them with a PATCH of the instance)")
    _check_driver(svc, svc._flavour(inst))
    if req.vnfdId == inst.vnfd_id:
        raise UnprocessableEntity(f"vnfdId: the VNF already runs {req.vnfdId}")
    pkg = svc.packages.find_enabled(req.vnfdId)  # ONBOARDED and ENABLED, else 409 / 422
    for what, have, want in (("vnfProvider", inst.vnf_provider, pkg.vnf_provider),
                             ("vnfProductName", inst.vnf_product_name, pkg.vnf_product_name)):
        if (want or "") != have:
            raise UnprocessableEntity(f"vnfdId: package {pkg.id} has {what} '{want}', the VNF '{have}': a change "
                                      "stays within one product")
    if not newer(inst.vnfd_version, pkg.vnfd_version or ""):
        raise UnprocessableEntity(f"vnfdId: package {pkg.id} has descriptor version {pkg.vnfd_version}, not newer "
                                  f"than the VNF's {inst.vnfd_version}")
    flavour = svc._flavour(inst)
    svc.packages.vnfd(pkg.id).flavour(flavour.id)  # the target package has the VNF's flavour (else 4xx)
    svc._validate_with_drivers(flavour, "CHANGE_VNFPKG", occ.operation_params, inst, occ)
    occ.plan["old"] = records_of(inst)
    occ.plan["new"] = {**records_of(inst), "vnfd_id": req.vnfdId, "vnf_pkg_id": pkg.id,
                       "vnf_provider": pkg.vnf_provider or "", "vnf_product_name": pkg.vnf_product_name or "",
                       "vnf_software_version": pkg.vnf_software_version or "", "vnfd_version": pkg.vnfd_version or "",
                       "additional_params": merged(inst.additional_params, req.additionalParams or {})}
