"""The top-level `additionalParams` keys of an LCM request: the engine's own (declared here), and the
one place that decides whether a key is accepted: it must be declared by the engine, by the
infrastructure driver of the instance's VIM or by a management driver of its flavour (each owner's
`declared`, domain/params.py). Keys given to a request that no owner declares for it:

- declared by no driver vnfm knows (a typo, `k8s_cluster_instalation_param2`): 400, with the
  nearest known key;
- declared by a driver this VNF does not use (a private-registry key on a kubeadm flavour): 422;
- a management driver's key on a terminate request (nothing there reads it): 400.

Keys accepted but not acted on (`inert` fields) give warnings, which the caller stores in the
occurrence (`vnfm op show` and `vnfm vnf show` print them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vnfm.domain.errors import BadRequest, UnprocessableEntity
from vnfm.domain.model import LcmOperation
from vnfm.domain.params import Declared, PackagePath, Params, PythonName, Text, doc, nearest
from vnfm.service.ports import PackageFiles

USER_DATA_NOT_RUN = ("vnfm never runs package Python: the infrastructure driver builds the VIM's parameters itself; "
                     "the file must exist in the package")


class EngineParams(Params):
    """The keys the engine itself reads (any VNF)."""

    all: bool = doc("heal: also re-create the VNFCs' volumes (else they are kept)", "000", default=False)
    vnfc_instance_ids: list[Text] | None = doc("scale in: which VNFCs to remove (alias `vnfcInstanceIds`)", "004",
                                               alias="vnfc_instance_ids", aliases=("vnfcInstanceIds",),
                                               shown="the newest")
    user_data: PackagePath | None = doc("Tacker's user-data script", "000-004", alias="lcm-operation-user-data",
                                        inert=USER_DATA_NOT_RUN)
    user_data_class: PythonName | None = doc("its class name", "000-004", alias="lcm-operation-user-data-class",
                                             inert="vnfm never runs package Python")
    ignore_dependent_cnfs: bool = doc("terminate of a cluster VNF: go ahead although CNFs still run on its "
                                      "Kubernetes VIM", default=False)


ENGINE = Declared("the engine", EngineParams)
# management drivers' keys are read by instantiate, scale, heal and change_vnfpkg; a terminate has none
DRIVER_OPERATIONS = frozenset({LcmOperation.INSTANTIATE, LcmOperation.SCALE, LcmOperation.HEAL,
                               LcmOperation.CHANGE_VNFPKG})
# the engine's keys that only one operation reads (any other operation would ignore them: refused)
ENGINE_KEY_OPERATIONS: dict[str, LcmOperation] = {
    "all": LcmOperation.HEAL,
    "vnfc_instance_ids": LcmOperation.SCALE,
    "vnfcInstanceIds": LcmOperation.SCALE,
    "ignore_dependent_cnfs": LcmOperation.TERMINATE,
}


def check(operation: str, extra: Mapping[str, Any] | None, *, infra: Declared[Any] | None,
          drivers: Sequence[Declared[Any]], elsewhere: Mapping[str, str], flavour_id: str,
          package: PackageFiles | None) -> list[str]:
    """Refuse a top-level key no owner of this request declares (see the module's text), check the
    engine's keys; the warnings of keys accepted but not acted on."""
    extra = extra or {}
    mine = [ENGINE, *([infra] if infra is not None else []),
            *(drivers if str(operation) in DRIVER_OPERATIONS else [])]
    known = frozenset().union(*(o.keys for o in mine))
    for key in extra:
        only = ENGINE_KEY_OPERATIONS.get(key)
        if only is not None and str(operation) != str(only):
            raise BadRequest(f"additionalParams.{key}: a {operation} request does not take it (only {only} does)")
        if key in known:
            continue
        if any(key in o.keys for o in drivers):
            raise BadRequest(f"additionalParams.{key}: a {operation} request does not take it (only instantiate, "
                             "scale and heal do)")
        if key in elsewhere:
            raise UnprocessableEntity(f"additionalParams.{key}: only the {elsewhere[key]} acts on it, and this VNF "
                                      f"(flavour '{flavour_id}', its VIM) does not use it, so it would be ignored")
        raise BadRequest(f"additionalParams.{key}: not a known key{nearest(key, sorted(known))}")
    engine = ENGINE.parse(extra)
    if engine.user_data is not None and package is not None and not package.exists(engine.user_data):
        raise UnprocessableEntity(f"additionalParams.lcm-operation-user-data: '{engine.user_data}' is not a file "
                                  "of the VNF package")
    return [n for o in mine for n in o.notices(extra)]


def declared_elsewhere(owners: Iterable[tuple[str, Declared[Any] | None]]) -> dict[str, str]:
    """key -> which driver declares it, over every driver vnfm has (for the 422 above)."""
    out: dict[str, str] = {}
    for name, d in owners:
        for key in d.keys if d is not None else ():
            out.setdefault(key, name)
    return out
