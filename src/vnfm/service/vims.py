"""The VIM registry: the default simulated cloud, OpenStack clouds, Kubernetes clusters."""

from __future__ import annotations

import base64
import builtins
import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from vnfm.domain.access import CALLER, caller_tenant, is_caller_confined, unscoped
from vnfm.domain.errors import BadRequest, Forbidden, NotFound, UnprocessableEntity
from vnfm.domain.model import Vim
from vnfm.service.ports import AbstractUnitOfWork, DependentCnf, UowFactory
from vnfm.service.secrets import SecretBox

# The seeds (Tacker's requests and output) write "openstack" and "kubernetes"; SOL003 v2.6.1 names
# the same types ETSINFV.OPENSTACK_KEYSTONE.V_2 / V_3 and ETSINFV.KUBERNETES.V_1 (Tacker writes
# "v_2" as well). Every spelling is accepted, in any case; vnfm reports the seeds' one.
OPENSTACK_TYPES = {"openstack", "etsinfv.openstack_keystone.v_2", "etsinfv.openstack_keystone.v_3"}
KUBERNETES_TYPES = {"kubernetes", "etsinfv.kubernetes.v_1"}
SIMULATOR = "simulator"
OWNER_KEY = "vnf_instance_id"  # extra of a Kubernetes VIM a cluster driver registered: the cluster's instance
_LABELS = {"openstack": "OpenStack", "kubernetes": "Kubernetes", SIMULATOR: "simulator"}
# Probes a VIM before it is registered: None when it answers and accepts its credentials, else why not.
VimProbe = Callable[[Vim], "str | None"]


def normalise_type(vim_type: str) -> str:
    """'ETSINFV.KUBERNETES.V_1' -> 'kubernetes', 'ETSINFV.OPENSTACK_KEYSTONE.v_2' -> 'openstack'."""
    low = vim_type.strip().lower()
    if low in OPENSTACK_TYPES:
        return "openstack"
    if low in KUBERNETES_TYPES:
        return "kubernetes"
    if low == SIMULATOR:
        return SIMULATOR
    raise BadRequest(f"vimType '{vim_type}' is not supported (openstack or ETSINFV.OPENSTACK_KEYSTONE.V_2, "
                     "kubernetes or ETSINFV.KUBERNETES.V_1, simulator)")


def reported_type(vim_type: str) -> str:
    """The spelling vnfm reports for a vimType it was given (unknown ones are left as they are)."""
    try:
        return normalise_type(vim_type)
    except BadRequest:
        return vim_type


class VimService:
    """Also the VimRegistry port that management drivers use."""

    def __init__(self, uow: UowFactory, box: SecretBox | None = None, *, simulator: bool = True,
                 probes: dict[str, VimProbe] | None = None) -> None:
        self.uow = uow
        self.box = box  # encrypts secrets in accessInfo / extra at rest
        self.simulator = simulator  # the simulated cloud is a VIM (setting `simulator`, VNFM_SIMULATOR)
        self.probes = probes or {}  # VIM type -> a check that it answers and takes its credentials

    def _sealed(self, vim: Vim) -> Vim:
        if self.box is None:
            return vim
        return dataclasses.replace(vim, access_info=self.box.seal(vim.access_info), extra=self.box.seal(vim.extra))

    def _open(self, vim: Vim | None) -> Vim | None:
        if vim is None or self.box is None:
            return vim
        return dataclasses.replace(vim, access_info=self.box.unseal(vim.access_info),
                                   extra=self.box.unseal(vim.extra))

    def ensure_default(self) -> Vim | None:
        """The default VIM. While the simulator is on, its VIM exists and is the default when no
        other VIM is; while it is off, a simulator VIM is never the default (None: no default).
        The default and the simulator's VIM serve every tenant: looked up past the caller's."""
        with self.uow() as uow, unscoped():
            found = uow.vims.default()
            if self.simulator and found is not None and found.vim_type == SIMULATOR:
                return found  # the simulator's VIM exists and is the default: one read
            sims = uow.vims.of_type(SIMULATOR)
            if not self.simulator:
                if found is not None and found.vim_type == SIMULATOR:
                    uow.vims.save(dataclasses.replace(found, is_default=False))
                    uow.commit()
                    return None
                return found
            if found is not None and sims:
                return found
            if sims:
                vim = dataclasses.replace(sims[0], is_default=True)
                uow.vims.save(vim)
            else:
                vim = Vim(vim_type=SIMULATOR, name="default-simulator", is_default=found is None,
                          extra={"description": "built-in simulated cloud (the embedded default VIM)"})
                uow.vims.add(vim)
            uow.commit()
            return found or vim

    def simulator_vim(self) -> Vim | None:
        """The simulated cloud's VIM while the simulator is on."""
        if not self.simulator:
            return None
        self.ensure_default()
        with self.uow() as uow, unscoped():
            sims = uow.vims.of_type(SIMULATOR)
        return sims[0] if sims else None

    def list(self) -> builtins.list[Vim]:
        with self.uow() as uow:
            return [v for v in (self._open(v) for v in uow.vims.list()) if v is not None]

    def _any_of_type(self, vim_type: str) -> bool:
        with self.uow() as uow:
            return bool(uow.vims.of_type(vim_type))

    def get(self, vim_id: str | None) -> Vim | None:
        if not vim_id:
            return None
        with self.uow() as uow:
            return self.get_in(uow, vim_id)

    def get_in(self, uow: AbstractUnitOfWork, vim_id: str | None) -> Vim | None:
        """`get` inside the caller's unit of work (the engine's load of a job: one unit, not two)."""
        return self._open(uow.vims.get(vim_id)) if vim_id else None

    def require(self, vim_id: str) -> Vim:
        vim = self.get(vim_id)
        if vim is None:
            raise NotFound(f"VIM {vim_id} is not registered")
        return vim

    def kubeconfig(self, vim_id: str, *, with_token: bool = False) -> dict[str, Any]:
        """A kubeconfig for Kubernetes VIM `vim_id`: its server and CA; its bearer token only when
        `with_token` (asked for explicitly)."""
        vim = self.require(vim_id)
        if vim.vim_type != "kubernetes":
            raise UnprocessableEntity(f"VIM {vim_id} is a {vim.vim_type} VIM, not a Kubernetes one")
        access = vim.access_info or {}
        server = str(access.get("authUrl") or (vim.interface_info or {}).get("endpoint") or "")
        cluster: dict[str, Any] = {"server": server}
        ca = str(access.get("ssl_ca_cert") or access.get("sslCaCert") or "")
        if ca:
            cluster["certificate-authority-data"] = base64.b64encode(ca.encode()).decode() \
                if "BEGIN CERTIFICATE" in ca else ca
        user: dict[str, Any] = {}
        token = access.get("bearer_token") or access.get("bearerToken")
        if with_token and token:
            user["token"] = str(token)
        name = vim.name or vim.id
        return {"apiVersion": "v1", "kind": "Config", "current-context": name,
                "clusters": [{"name": name, "cluster": cluster}],
                "users": [{"name": f"{name}-vnfm", "user": user}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-vnfm"}}],
                "preferences": {}}

    def register(self, vim: Vim) -> Vim:
        """Store a new VIM. A new default replaces the previous one (one default VIM at a time)."""
        self._refuse_simulator_when_off(vim)
        if CALLER.get() is not None:  # a caller's VIM is its tenant's; a driver's is its instance's
            vim.tenant = caller_tenant()
        if vim.is_default and is_caller_confined():
            raise Forbidden("only an admin registers the default VIM (it serves every tenant)")
        with self.uow() as uow:
            with unscoped():  # ids are unique across tenants
                taken = uow.vims.get(vim.id) is not None
            if taken:
                raise BadRequest(f"VIM {vim.id} is already registered")
            if vim.is_default:
                self._clear_defaults(uow, keep=vim.id)
            uow.vims.add(self._sealed(vim))
            uow.commit()
        return vim

    def _refuse_simulator_when_off(self, vim: Vim) -> None:
        if vim.vim_type == SIMULATOR and not self.simulator:
            raise UnprocessableEntity("the simulated cloud is off on this server (setting simulator, "
                                      "VNFM_SIMULATOR=0): a simulator VIM cannot be registered")

    @staticmethod
    def _clear_defaults(uow: Any, keep: str) -> None:
        for other in uow.vims.list():
            if other.is_default and other.id != keep:
                uow.vims.save(dataclasses.replace(other, is_default=False))

    def register_body(self, body: dict[str, Any], *, probe: bool = False) -> Vim:
        """Register the VIM `body` describes; with `probe`, only once it answers and accepts its
        credentials (422 saying what failed, nothing stored otherwise)."""
        vim = self._from_body(body)
        if probe:
            check = self.probes.get(vim.vim_type)
            if check is None:
                raise UnprocessableEntity(f"a {vim.vim_type} VIM cannot be probed (probe is for: "
                                          f"{', '.join(sorted(self.probes)) or 'none'})")
            failed = check(vim)
            if failed:
                raise UnprocessableEntity(f"VIM '{vim.name}' was not registered: {failed}")
        return self.register(vim)

    def _from_body(self, body: dict[str, Any]) -> Vim:
        if not isinstance(body, dict):
            raise BadRequest("VIM registration must be a JSON object")
        for key in ("name", "vimType"):
            if not body.get(key):
                raise BadRequest(f"'{key}' is required to register a VIM")
        vim_type = normalise_type(str(body["vimType"]))
        access = body.get("accessInfo") or {}
        if not isinstance(access, dict):
            raise BadRequest("accessInfo must be an object")
        if vim_type == "openstack":
            for key in ("authUrl" if "authUrl" in access or "auth_url" not in access else "auth_url",):
                if not (access.get("authUrl") or access.get("auth_url")):
                    raise BadRequest(f"accessInfo.{key} is required for an OpenStack VIM")
        if vim_type == "kubernetes" and not (access.get("authUrl") or body.get("interfaceInfo", {}).get("endpoint")):
            raise BadRequest("accessInfo.authUrl (the API server URL) is required for a Kubernetes VIM")
        vim = Vim(vim_type=vim_type, name=str(body["name"]), access_info=access,
                  interface_info=body.get("interfaceInfo") or {}, extra=body.get("extra") or {},
                  is_default=bool(body.get("isDefault", False)))
        if body.get("id"):
            vim.id = str(body["id"])
        return vim

    def update(self, vim: Vim) -> Vim:
        with self.uow() as uow:
            if uow.vims.get(vim.id) is None:
                raise NotFound(f"VIM {vim.id} is not registered")
            if vim.is_default:
                if is_caller_confined():
                    raise Forbidden("only an admin makes a VIM the default (it serves every tenant)")
                self._refuse_simulator_when_off(vim)
                self._clear_defaults(uow, keep=vim.id)
            uow.vims.save(self._sealed(vim))
            uow.commit()
        return vim

    def delete(self, vim_id: str) -> None:
        with self.uow() as uow:
            vim = uow.vims.get(vim_id)
            if vim is None:
                raise NotFound(f"VIM {vim_id} is not registered")
            if vim.is_default:
                raise BadRequest("the default VIM cannot be deleted")
            uow.vims.delete(vim_id)
            uow.commit()

    def dependents(self, instance_id: str) -> builtins.list[DependentCnf]:
        """The instances deployed on a Kubernetes VIM that VNF instance `instance_id` registered
        (its cluster's CNFs): every instance whose VIM it is, instantiated or on its way."""
        with self.uow() as uow:
            owned = {v.id for v in uow.vims.of_type("kubernetes")
                     if ((self._open(v) or v).extra or {}).get(OWNER_KEY) == instance_id}
            if not owned:
                return []
            found = [i for i in uow.instances.on_vims(sorted(owned)) if i.id != instance_id]
        return [DependentCnf(i.id, i.vnf_instance_name or i.id, str(i.vim_id), i.instantiation_state.value,
                             copy.deepcopy(i.driver_state)) for i in sorted(found, key=lambda i: i.id)]

    def resolve(self, conns: builtins.list[dict[str, Any]]) -> VimChoice:
        """Which VIM an instantiate request runs on (Tacker's rules, see docs/vims.md): the
        Kubernetes VIM it names (a CNF), else the VIM its one other entry names, else the default.
        A named vimId that is not registered (or is of another type) is a 422; except that, while
        the simulator is on and no VIM of the named type is registered, the request runs on the
        simulator, the stored vimConnectionInfo says so, and the choice carries a warning."""
        kube = [c for c in conns if normalise_type(str(c.get("vimType", ""))) == "kubernetes"]
        infra = [c for c in conns if c not in kube]
        if len(kube) > 1 or len(infra) > 1 or (kube and infra):
            raise UnprocessableEntity(f"vimConnectionInfo lists {len(conns)} VIMs: a VNF instance runs on one VIM "
                                      "(one entry)")
        for c in conns:
            inline = [k for k in ("interfaceInfo", "accessInfo") if c.get(k)]
            if inline:  # never used: the registered VIM's are
                label = _LABELS.get(normalise_type(str(c.get("vimType", ""))), "")
                article = "an" if label[:1] in ("A", "E", "I", "O", "U") else "a"
                raise UnprocessableEntity(f"vimConnectionInfo '{c.get('id')}': {' and '.join(inline)} of {article} "
                                          f"{label} VIM cannot be given here: register the VIM (vnfm vim register) "
                                          "and name it by vimId")
        if not conns:
            default = self.ensure_default()
            if default is None:
                raise UnprocessableEntity("the request has no vimConnectionInfo and no default VIM is registered: "
                                          "name a VIM by vimId, or register one with isDefault")
            entry = {"id": default.id, "vimId": default.id, "vimType": default.vim_type}
            return VimChoice(default, [entry], entry["id"])
        conn = conns[0]
        wanted = normalise_type(str(conn.get("vimType", "")))
        vim_id = str(conn.get("vimId") or "")
        where = f"vimConnectionInfo '{conn.get('id')}'"
        vim = self.get(vim_id) if vim_id else None
        if vim is None and not vim_id and wanted != "kubernetes":
            default = self.ensure_default()
            vim = default if default is not None and default.vim_type == wanted else None
        if vim is not None:
            if vim.vim_type != wanted:
                raise UnprocessableEntity(f"{where}: VIM {vim.id} is a {vim.vim_type} VIM, not {wanted}")
            if vim.vim_type == SIMULATOR and not self.simulator:
                raise UnprocessableEntity(f"{where}: the simulated cloud is off on this server (VNFM_SIMULATOR=0)")
            return VimChoice(vim, conns, str(conn["id"]))
        sim = self.simulator_vim() if wanted != "kubernetes" else None
        if sim is not None and not self._any_of_type(wanted):
            named = f"vimId {vim_id}" if vim_id else "no vimId"
            entry = {"id": str(conn["id"]), "vimId": sim.id, "vimType": SIMULATOR}
            warning = (f"{where} names {named} ({wanted}), which is not registered, and no {wanted} VIM is: "
                       f"the VNF runs on the simulated cloud (VIM {sim.id}) instead; {named} was not used")
            return VimChoice(sim, [entry], entry["id"], warning)
        kind = "Kubernetes VIM" if wanted == "kubernetes" else f"{wanted} VIM"
        what = f"{kind} {vim_id} is not registered" if vim_id else f"no vimId given and the default VIM is not a {kind}"
        raise UnprocessableEntity(f"{where}: {what}")


@dataclasses.dataclass
class VimChoice:
    """The VIM an instance runs on, the vimConnectionInfo to store (it names that VIM), the entry's
    id (what every ResourceHandle.vimConnectionId names), and a warning for the occurrence."""

    vim: Vim
    conns: builtins.list[dict[str, Any]]
    connection_id: str
    warning: str | None = None
