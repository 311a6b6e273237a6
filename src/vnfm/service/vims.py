"""The VIM registry: the default simulated cloud, OpenStack clouds, Kubernetes clusters."""

from __future__ import annotations

import base64
import builtins
import copy
import dataclasses
from typing import Any

from vnfm.domain.errors import BadRequest, NotFound, UnprocessableEntity
from vnfm.domain.model import Vim
from vnfm.service.ports import DependentCnf, UowFactory
from vnfm.service.secrets import SecretBox

# The seeds (Tacker's requests and output) write "openstack" and "kubernetes"; SOL003 v2.6.1 names
# the same types ETSINFV.OPENSTACK_KEYSTONE.V_2 / V_3 and ETSINFV.KUBERNETES.V_1 (Tacker writes
# "v_2" as well). Every spelling is accepted, in any case; vnfm reports the seeds' one.
OPENSTACK_TYPES = {"openstack", "etsinfv.openstack_keystone.v_2", "etsinfv.openstack_keystone.v_3"}
KUBERNETES_TYPES = {"kubernetes", "etsinfv.kubernetes.v_1"}
SIMULATOR = "simulator"
OWNER_KEY = "vnf_instance_id"  # extra of a Kubernetes VIM a cluster driver registered: the cluster's instance


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

    def __init__(self, uow: UowFactory, box: SecretBox | None = None) -> None:
        self.uow = uow
        self.box = box  # encrypts secrets in accessInfo / extra at rest

    def _sealed(self, vim: Vim) -> Vim:
        if self.box is None:
            return vim
        return dataclasses.replace(vim, access_info=self.box.seal(vim.access_info), extra=self.box.seal(vim.extra))

    def _open(self, vim: Vim | None) -> Vim | None:
        if vim is None or self.box is None:
            return vim
        return dataclasses.replace(vim, access_info=self.box.unseal(vim.access_info),
                                   extra=self.box.unseal(vim.extra))

    def ensure_default(self) -> Vim:
        with self.uow() as uow:
            found = uow.vims.default()
            if found is not None:
                return found
            vim = Vim(vim_type=SIMULATOR, name="default-simulator", is_default=True,
                      extra={"description": "built-in simulated cloud (the embedded default VIM)"})
            uow.vims.add(vim)
            uow.commit()
            return vim

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
            return self._open(uow.vims.get(vim_id))

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
        with self.uow() as uow:
            if uow.vims.get(vim.id) is not None:
                raise BadRequest(f"VIM {vim.id} is already registered")
            uow.vims.add(self._sealed(vim))
            uow.commit()
        return vim

    def register_body(self, body: dict[str, Any]) -> Vim:
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
        return self.register(vim)

    def update(self, vim: Vim) -> Vim:
        with self.uow() as uow:
            if uow.vims.get(vim.id) is None:
                raise NotFound(f"VIM {vim.id} is not registered")
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

    def resolve(self, conns: builtins.list[dict[str, Any]]) -> tuple[Vim, str | None]:
        """Which VIM an instantiate request runs on, and a note when it is the default."""
        default = self.ensure_default()
        for c in conns:  # a CNF: the Kubernetes VIM it names (a cluster a driver registered, or an operator's)
            if normalise_type(str(c.get("vimType", ""))) != "kubernetes":
                continue
            inline = [k for k in ("interfaceInfo", "accessInfo") if c.get(k)]
            if inline:  # never used: the registered VIM's are
                raise UnprocessableEntity(f"vimConnectionInfo '{c.get('id')}': {' and '.join(inline)} of a Kubernetes "
                                          "VIM cannot be given here: register the VIM and name it by vimId")
            vim = self.get(str(c.get("vimId") or ""))
            if vim is None or vim.vim_type != "kubernetes":
                raise UnprocessableEntity(f"vimConnectionInfo '{c.get('id')}': Kubernetes VIM {c.get('vimId')} "
                                          "is not registered")
            return vim, None
        infra = [c for c in conns if normalise_type(str(c.get("vimType", ""))) != "kubernetes"]
        if not infra:
            return default, "no vimConnectionInfo given: running on the default VIM (simulated cloud)"
        conn = infra[0]
        vim_id = conn.get("vimId")
        if vim_id:
            vim = self.get(vim_id)
            if vim is not None:
                return vim, None
        vtype = normalise_type(str(conn.get("vimType")))
        if vtype == "openstack" and not self._any_of_type("openstack"):
            return default, (
                f"vimId {vim_id} is not registered and no OpenStack VIM is: running on the default VIM "
                "(simulated cloud)"
            )
        if vtype == SIMULATOR:
            return default, None
        raise UnprocessableEntity(f"vimConnectionInfo '{conn.get('id')}': VIM {vim_id} is not registered")
