"""`private_registry_installation_param` (seed 003): parsed, each error naming its key, and the
checks that need the flavour and the package (made when the request arrives)."""

from __future__ import annotations

import posixpath
from typing import Any

from pydantic import model_validator

from vnfm.adapters.mgmt.cluster.params import ProxyBase
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.params import AbsPath, CpName, Declared, Login, PackagePath, Params, Port, Secret, VnfdId, doc
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import PackageFiles

ROOT = "private_registry_installation_param"
DEFAULT_PORT = 5000
DEFAULT_DATA_DIR = "/var/lib/vnfm-private-registry"


class RegistryParams(Params):
    ssh_cp_name: CpName = doc("CP (or `<VDU/CP>_FloatingIP`) the VNFM reaches the VM at; its fixed address is the "
                              "registry's", "003", default=...)
    ssh_username: Login = doc("SSH login; the scripts run as this user (through sudo when not root)", "003",
                              default=...)
    ssh_password: Secret = doc("SSH password (only ever the SSH login's: never on a command line)", "003",
                               default=...)
    image_path: PackagePath | None = doc("package file made by `docker save registry` (or an OCI archive)", "003",
                                         shown="`docker pull registry`")
    port_no: Port = doc("TCP port the registry serves on", "003", default=DEFAULT_PORT)
    cert_path: PackagePath | None = doc("PEM certificate in the package (e.g. `Files/registry/`): the registry "
                                        "serves HTTPS", "003", required="no (with key_path)")
    key_path: PackagePath | None = doc("its PEM key in the package", "003", required="no (with cert_path)")
    data_dir: AbsPath = doc("the registry's data on the VM (the volume's mount point when there is one)", "003",
                            default=DEFAULT_DATA_DIR)
    volume_resource_id: VnfdId | None = doc("which virtual storage of the VDU holds the data", "003",
                                            shown="the first one it has")
    proxy: ProxyBase = doc("proxy for apt and the Docker daemon (credentials in the URLs are secrets)", "003",
                           default=ProxyBase())

    @model_validator(mode="after")
    def _tls(self) -> RegistryParams:
        if (self.cert_path is None) != (self.key_path is None):
            missing = "key_path" if self.key_path is None else "cert_path"
            raise ValueError(f"{missing}: is required with {'cert_path' if self.key_path is None else 'key_path'} "
                             "(TLS needs the certificate and its key)")
        return self


class PrivateRegistryRoot(Params):
    """The private-registry driver's additionalParams keys."""

    registry: RegistryParams = doc("the registry VM's installation parameters", "003", default=..., alias=ROOT)


# a heal request's keys override the stored ones one by one (seed 003)
DECLARED = Declared("private-registry", PrivateRegistryRoot, merge_depth=2)


def parse(extra: dict[str, Any]) -> RegistryParams:
    return DECLARED.parse(extra).registry


def _in_package(package: PackageFiles | None, key: str, path: str | None) -> None:
    if path is None or package is None:
        return
    norm = posixpath.normpath(path)
    if norm.startswith(("/", "..")) or not package.exists(norm):
        raise UnprocessableEntity(f"additionalParams.{ROOT}.{key}: '{path}' is not a file of the VNF package")


def check(rp: RegistryParams, flavour: Flavour, package: PackageFiles | None) -> None:
    """The CP, the package files and the volume against the flavour and the package."""
    cp = rp.ssh_cp_name
    base = cp.removesuffix("_FloatingIP")
    known = cp in flavour.cps or (base != cp and (base in flavour.cps or base in flavour.vdus))
    if not known:
        cps = ", ".join(sorted(flavour.cps)) or "none"
        raise UnprocessableEntity(f"additionalParams.{ROOT}.ssh_cp_name: '{cp}' is not a CP of flavour "
                                  f"'{flavour.id}' (CPs: {cps})")
    for key in ("image_path", "cert_path", "key_path"):
        _in_package(package, key, getattr(rp, key))
    if rp.volume_resource_id is not None:
        vdu = flavour.cps[cp].vdu_id if cp in flavour.cps else cp[: -len("_FloatingIP")]
        storages = getattr(flavour.vdus.get(vdu), "storages", None)
        if storages is not None and rp.volume_resource_id not in storages:
            raise UnprocessableEntity(f"additionalParams.{ROOT}.volume_resource_id: '{rp.volume_resource_id}' is "
                                      f"not a virtual storage of VDU '{vdu}'")


def validate(operation: str, request: dict[str, Any], instance: VnfInstance, flavour: Flavour,
             package: PackageFiles | None) -> None:
    op = str(operation)
    if op in (LcmOperation.INSTANTIATE, LcmOperation.HEAL):
        check(for_operation(op, instance.additional_params, request), flavour, package)


def for_operation(operation: str, stored: dict[str, Any], request: dict[str, Any]) -> RegistryParams:
    """Instantiate's parameters, or the stored ones with a heal request's keys over them."""
    return DECLARED.for_operation(operation, stored, (request or {}).get("additionalParams") or {}).registry
