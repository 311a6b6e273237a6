"""`private_registry_installation_param` (seed 003): parsed, each error naming its key, and the
checks that need the flavour and the package (made when the request arrives)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from vnfm.domain.errors import BadRequest, UnprocessableEntity
from vnfm.domain.model import LcmOperation, VnfInstance
from vnfm.domain.vnfd import Flavour
from vnfm.nodesteps.registry_vnf import check_no_proxy, check_proxy
from vnfm.service.ports import PackageFiles

ROOT = "private_registry_installation_param"
DEFAULT_PORT = 5000
DEFAULT_DATA_DIR = "/var/lib/vnfm-private-registry"
_PATH = re.compile(r"^/[A-Za-z0-9_./@:+-]*$")


@dataclass(frozen=True)
class Proxy:
    http_proxy: str | None = field(default=None, repr=False)
    https_proxy: str | None = field(default=None, repr=False)
    no_proxy: str = ""


@dataclass(frozen=True)
class RegistryParams:
    ssh_cp_name: str
    ssh_username: str
    ssh_password: str = field(repr=False)
    image_path: str | None = None
    port_no: int = DEFAULT_PORT
    cert_path: str | None = None  # TLS: a PEM certificate in the package
    key_path: str | None = None  # and its key
    data_dir: str = DEFAULT_DATA_DIR  # on the VM's disk, or where the VDU's volume is mounted
    volume_resource_id: str | None = None  # which virtual storage holds the data (default: the first)
    proxy: Proxy = field(default_factory=Proxy)


def _str(d: dict[str, Any], key: str, *, required: bool) -> str | None:
    v = d.get(key)
    if v is None or v == "":
        if required:
            raise BadRequest(f"{ROOT}.{key} is required")
        return None
    if not isinstance(v, str):
        raise BadRequest(f"{ROOT}.{key} must be a string")
    return v


def _port(d: dict[str, Any]) -> int:
    v = d.get("port_no", DEFAULT_PORT)
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v.strip())
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 65535:
        raise BadRequest(f"{ROOT}.port_no must be a TCP port number within 1-65535 (got {v!r})")
    return v


def _proxy(d: dict[str, Any]) -> Proxy:
    raw = d.get("proxy")
    if raw is None:
        return Proxy()
    if not isinstance(raw, dict):
        raise BadRequest(f"{ROOT}.proxy must be an object")
    out: dict[str, str] = {}
    unknown = sorted(set(raw) - {"http_proxy", "https_proxy", "no_proxy"})
    if unknown:
        raise BadRequest(f"{ROOT}.proxy: unknown key(s) {', '.join(unknown)} "
                         "(known: http_proxy, https_proxy, no_proxy)")
    for k in ("http_proxy", "https_proxy", "no_proxy"):
        v = raw.get(k)
        if v is None or v == "":
            continue
        if not isinstance(v, str):
            raise BadRequest(f"{ROOT}.proxy.{k} must be a string")
        try:  # the node step's own checks; a proxy URL is never echoed (it may carry credentials)
            if k == "no_proxy":
                check_no_proxy(v)
            else:
                check_proxy(k, v)
        except ValueError as e:
            raise BadRequest(f"{ROOT}.proxy.{e}") from None
        out[k] = v
    return Proxy(out.get("http_proxy"), out.get("https_proxy"), out.get("no_proxy", ""))


KEYS = frozenset({"ssh_cp_name", "ssh_username", "ssh_password", "image_path", "port_no", "cert_path",
                  "key_path", "data_dir", "volume_resource_id", "proxy"})


def parse(extra: dict[str, Any]) -> RegistryParams:
    d = (extra or {}).get(ROOT)
    if not isinstance(d, dict):
        raise BadRequest(f"additionalParams.{ROOT} is required (an object)")
    unknown = sorted(set(d) - KEYS)
    if unknown:  # a key the driver would not act on (a typo, another driver's key) is refused
        raise BadRequest(f"{ROOT}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    cp = _str(d, "ssh_cp_name", required=True)
    user = _str(d, "ssh_username", required=True)
    pw = _str(d, "ssh_password", required=True)
    assert cp is not None and user is not None and pw is not None
    cert, key = _str(d, "cert_path", required=False), _str(d, "key_path", required=False)
    if (cert is None) != (key is None):
        missing = "key_path" if key is None else "cert_path"
        raise BadRequest(f"{ROOT}.{missing} is required with {'cert_path' if key is None else 'key_path'} "
                         "(TLS needs the certificate and its key)")
    data_dir = _str(d, "data_dir", required=False) or DEFAULT_DATA_DIR
    if not _PATH.match(data_dir) or "/../" in data_dir + "/" or "//" in data_dir or data_dir == "/":
        raise BadRequest(f"{ROOT}.data_dir must be a plain absolute path other than /")
    return RegistryParams(cp, user, pw, _str(d, "image_path", required=False), _port(d), cert, key, data_dir,
                          _str(d, "volume_resource_id", required=False), _proxy(d))


def _in_package(package: PackageFiles | None, key: str, path: str | None) -> None:
    if path is None or package is None:
        return
    norm = posixpath.normpath(path)
    if norm.startswith(("/", "..")) or not package.exists(norm):
        raise UnprocessableEntity(f"{ROOT}.{key}: '{path}' is not a file of the VNF package")


def check(rp: RegistryParams, flavour: Flavour, package: PackageFiles | None) -> None:
    """The CP, the package files and the volume against the flavour and the package."""
    cp = rp.ssh_cp_name
    base = cp.removesuffix("_FloatingIP")
    known = cp in flavour.cps or (base != cp and (base in flavour.cps or base in flavour.vdus))
    if not known:
        cps = ", ".join(sorted(flavour.cps)) or "none"
        raise UnprocessableEntity(f"{ROOT}.ssh_cp_name: '{cp}' is not a CP of flavour '{flavour.id}' (CPs: {cps})")
    for key in ("image_path", "cert_path", "key_path"):
        _in_package(package, key, getattr(rp, key))
    if rp.volume_resource_id is not None:
        vdu = flavour.cps[cp].vdu_id if cp in flavour.cps else cp[: -len("_FloatingIP")]
        storages = getattr(flavour.vdus.get(vdu), "storages", None)
        if storages is not None and rp.volume_resource_id not in storages:
            raise UnprocessableEntity(f"{ROOT}.volume_resource_id: '{rp.volume_resource_id}' is not a virtual "
                                      f"storage of VDU '{vdu}'")


def validate(operation: str, request: dict[str, Any], instance: VnfInstance, flavour: Flavour,
             package: PackageFiles | None) -> None:
    op = str(operation)
    if op == LcmOperation.INSTANTIATE:
        check(parse(request.get("additionalParams") or {}), flavour, package)
    elif op == LcmOperation.HEAL:
        extra = (request.get("additionalParams") or {}).get(ROOT)
        raw = {ROOT: {**(instance.additional_params.get(ROOT) or {}), **(extra or {})}}
        check(parse(raw), flavour, package)


def for_operation(operation: str, stored: dict[str, Any], request: dict[str, Any]) -> RegistryParams:
    """Instantiate's parameters, or the stored ones with a heal request's keys over them."""
    if str(operation) == LcmOperation.INSTANTIATE:
        return parse(stored)
    extra = ((request or {}).get("additionalParams") or {}).get(ROOT) or {}
    return parse({ROOT: {**(stored.get(ROOT) or {}), **extra}})
