"""The few OpenStack calls the Heat driver makes, behind one small interface.

`SdkCloud` implements it with openstacksdk (Heat through its REST API on the SDK's adapter, the
other services through the SDK's resources). Unit tests use a fake of `Cloud`. Calls are blocking:
the driver runs them in a thread. Results are plain dicts with the API's field names.
"""

from __future__ import annotations

import abc
import time
from typing import Any
from urllib.parse import quote

from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import Vim


class OpenStackApiError(OperationFailed):
    """An OpenStack API refused a call (the message is the API's, secrets are never in it)."""


class Cloud(abc.ABC):
    # --- Heat
    @abc.abstractmethod
    def find_stack(self, name_or_id: str) -> dict[str, Any] | None:
        """{"id", "stack_name", "stack_status", "stack_status_reason", "updated_time", ...} or None."""

    @abc.abstractmethod
    def create_stack(
        self, name: str, template: dict[str, Any], files: dict[str, str], parameters: dict[str, Any], timeout_mins: int
    ) -> str: ...

    @abc.abstractmethod
    def update_stack(
        self,
        stack: dict[str, Any],
        template: dict[str, Any],
        files: dict[str, str],
        parameters: dict[str, Any],
        timeout_mins: int,
    ) -> None: ...

    @abc.abstractmethod
    def delete_stack(self, stack: dict[str, Any]) -> None: ...

    @abc.abstractmethod
    def list_resources(self, stack_id: str) -> list[dict[str, Any]]:
        """The direct resources of one stack: resource_name, resource_type, physical_resource_id,
        resource_status, resource_status_reason, creation_time."""

    @abc.abstractmethod
    def mark_unhealthy(self, stack_id: str, resource_name: str, reason: str) -> None: ...

    # --- Nova, Neutron, Cinder, Glance
    @abc.abstractmethod
    def get_server(self, server_id: str) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def server_ports(self, server_id: str) -> list[dict[str, Any]]: ...

    @abc.abstractmethod
    def get_port(self, port_id: str) -> dict[str, Any] | None:
        """{"id", "name", "network_id", "fixed_ips": [{"ip_address", "subnet_id"}], "mac_address",
        "device_id", "device_owner", "description", "port_security_enabled", "allowed_address_pairs":
        [{"ip_address", "mac_address"}], "created_at"}."""

    @abc.abstractmethod
    def list_ports(self, *, device_id: str, device_owner: str) -> list[dict[str, Any]]:
        """The ports with that device_id and device_owner (as `get_port` gives them)."""

    @abc.abstractmethod
    def create_port(
        self,
        network_id: str,
        *,
        name: str,
        description: str,
        device_id: str,
        device_owner: str,
        subnet_id: str | None = None,
    ) -> dict[str, Any]:
        """A port on the network (an address of `subnet_id` when given, else of each subnet)."""

    @abc.abstractmethod
    def set_allowed_address_pairs(self, port_id: str, pairs: list[dict[str, Any]]) -> None:
        """Replace the port's allowed_address_pairs (no-op when the port is gone)."""

    @abc.abstractmethod
    def delete_port(self, port_id: str) -> None:
        """Delete the port (no error when it is gone)."""

    @abc.abstractmethod
    def port_floating_ips(self, port_id: str) -> list[str]: ...

    @abc.abstractmethod
    def get_volume(self, volume_id: str) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def detach_volume(self, server_id: str, volume_id: str, timeout: float) -> None:
        """Detach the volume from the server (no-op when it is not attached to it) and wait, up to
        `timeout` seconds, until Cinder reports it available."""

    @abc.abstractmethod
    def find_image(self, name_or_id: str) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def upload_image(self, name: str, data: bytes, disk_format: str, container_format: str) -> dict[str, Any]: ...

    @abc.abstractmethod
    def find_flavor(self, name_or_id: str) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def list_flavors(self) -> list[dict[str, Any]]: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if d.get(k) not in (None, ""):
            return d[k]
    return None


def auth_args(vim: Vim) -> dict[str, Any]:
    """openstacksdk connection arguments from a VIM's accessInfo (camelCase or snake_case keys)."""
    a = dict(vim.access_info or {})
    auth_url = _first(a, "authUrl", "auth_url")
    if not auth_url:
        raise UnprocessableEntity(f"VIM {vim.id}: accessInfo.authUrl is missing")
    args: dict[str, Any] = {"auth_url": str(auth_url)}
    app_id = _first(a, "applicationCredentialId", "application_credential_id")
    if app_id:
        args["auth_type"] = "v3applicationcredential"
        args["application_credential_id"] = app_id
        args["application_credential_secret"] = _first(
            a, "applicationCredentialSecret", "application_credential_secret"
        )
    else:
        args["auth_type"] = "password"
        args["username"] = _first(a, "username", "userName", "user")
        args["password"] = _first(a, "password")
        if not args["username"] or not args["password"]:
            raise UnprocessableEntity(
                f"VIM {vim.id}: accessInfo needs username and password, or an application credential"
            )
        project_id = _first(a, "projectId", "project_id", "tenantId")
        if project_id:
            args["project_id"] = project_id
        else:
            args["project_name"] = _first(a, "project", "projectName", "project_name", "tenant") or "admin"
            args["project_domain_name"] = (
                _first(a, "projectDomain", "projectDomainName", "project_domain_name") or "Default"
            )
        args["user_domain_name"] = _first(a, "userDomain", "userDomainName", "user_domain_name") or "Default"
    region = _first(a, "region", "regionName", "region_name")
    if region:
        args["region_name"] = region
    cacert = _first(a, "cacert", "caBundle", "ca_bundle", "caCert")
    verify = _first(a, "certVerify", "cert_verify", "verify")
    if cacert:
        args["cacert"] = cacert
    if verify is not None and str(verify).lower() in ("false", "0", "no"):
        args["verify"] = False
    iface = _first(a, "interface")
    if iface:
        args["interface"] = iface
    return args


def _d(obj: Any) -> dict[str, Any]:
    if obj is None:
        return {}
    if isinstance(obj, dict):
        return obj
    return dict(obj.to_dict(computed=True)) if hasattr(obj, "to_dict") else dict(obj)


def _port(obj: Any) -> dict[str, Any]:
    """A port with the API's names for the attributes the SDK renames."""
    d = _d(obj)
    if "port_security_enabled" not in d and "is_port_security_enabled" in d:
        d["port_security_enabled"] = d["is_port_security_enabled"]
    return d


class SdkCloud(Cloud):
    """openstacksdk-backed Cloud for one VIM."""

    def __init__(self, vim: Vim) -> None:
        import openstack  # imported lazily: only a VIM of type openstack needs it

        self._sdk = openstack
        # connect_retries: an API behind a WSGI server closes idle keep-alive connections, and a
        # request sent on one just then fails with "Remote end closed connection without response".
        self.conn = openstack.connect(
            **auth_args(vim), app_name="vnfm", load_yaml_config=False, load_envvars=False, connect_retries=3
        )

    def close(self) -> None:
        self.conn.close()

    # --- Heat over REST (stable across SDK versions; nested stacks by id need the lookup redirect)
    def _heat(self, method: str, url: str, ok: tuple[int, ...], **kw: Any) -> Any:
        resp = self.conn.orchestration.request(url, method, raise_exc=False, connect_retries=3, **kw)
        if resp.status_code in ok:
            return resp
        try:
            err = resp.json().get("error") or {}
            msg = err.get("message") or resp.text
        except ValueError:
            msg = resp.text
        raise OpenStackApiError(f"Heat {method} {url.split('?')[0]}: {resp.status_code} {msg}".strip())

    def find_stack(self, name_or_id: str) -> dict[str, Any] | None:
        resp = self._heat("GET", f"/stacks/{quote(name_or_id)}", (200, 404))
        if resp.status_code == 404:
            return None
        stack: dict[str, Any] = resp.json()["stack"]
        return stack

    def create_stack(
        self, name: str, template: dict[str, Any], files: dict[str, str], parameters: dict[str, Any], timeout_mins: int
    ) -> str:
        body = {
            "stack_name": name,
            "template": template,
            "files": files,
            "parameters": parameters,
            "timeout_mins": timeout_mins,
            "disable_rollback": True,
        }
        resp = self._heat("POST", "/stacks", (200, 201, 202), json=body)
        return str(resp.json()["stack"]["id"])

    def update_stack(
        self,
        stack: dict[str, Any],
        template: dict[str, Any],
        files: dict[str, str],
        parameters: dict[str, Any],
        timeout_mins: int,
    ) -> None:
        body = {
            "template": template,
            "files": files,
            "parameters": parameters,
            "timeout_mins": timeout_mins,
            "disable_rollback": True,
        }
        self._heat("PUT", f"/stacks/{quote(stack['stack_name'])}/{stack['id']}", (200, 202), json=body)

    def delete_stack(self, stack: dict[str, Any]) -> None:
        self._heat("DELETE", f"/stacks/{quote(stack['stack_name'])}/{stack['id']}", (200, 202, 204, 404))

    def list_resources(self, stack_id: str) -> list[dict[str, Any]]:
        resp = self._heat("GET", f"/stacks/{stack_id}/resources", (200, 404))
        if resp.status_code == 404:
            return []
        resources: list[dict[str, Any]] = resp.json().get("resources") or []
        return resources

    def mark_unhealthy(self, stack_id: str, resource_name: str, reason: str) -> None:
        stack = self.find_stack(stack_id)
        if stack is None:
            raise OpenStackApiError(f"Heat: stack {stack_id} does not exist")
        self._heat(
            "PATCH",
            f"/stacks/{quote(stack['stack_name'])}/{stack['id']}/resources/{quote(resource_name)}",
            (200,),
            json={"mark_unhealthy": True, "resource_status_reason": reason},
        )

    # --- the other services
    def _call(self, what: str, fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except self._sdk.exceptions.NotFoundException:
            return None
        except self._sdk.exceptions.SDKException as exc:
            raise OpenStackApiError(f"{what}: {exc}") from None

    def get_server(self, server_id: str) -> dict[str, Any] | None:
        s = self._call("Nova get server", self.conn.compute.get_server, server_id)
        return _d(s) if s is not None else None

    def server_ports(self, server_id: str) -> list[dict[str, Any]]:
        ports = self._call("Neutron list ports", lambda: list(self.conn.network.ports(device_id=server_id)))
        return [_d(p) for p in ports or []]

    def get_port(self, port_id: str) -> dict[str, Any] | None:
        p = self._call("Neutron get port", self.conn.network.get_port, port_id)
        return _port(p) if p is not None else None

    def list_ports(self, *, device_id: str, device_owner: str) -> list[dict[str, Any]]:
        ports = self._call(
            "Neutron list ports",
            lambda: list(self.conn.network.ports(device_id=device_id, device_owner=device_owner)),
        )
        return [_port(p) for p in ports or []]

    def create_port(
        self,
        network_id: str,
        *,
        name: str,
        description: str,
        device_id: str,
        device_owner: str,
        subnet_id: str | None = None,
    ) -> dict[str, Any]:
        attrs: dict[str, Any] = {
            "network_id": network_id,
            "name": name,
            "description": description,
            "device_id": device_id,
            "device_owner": device_owner,
        }
        if subnet_id:
            attrs["fixed_ips"] = [{"subnet_id": subnet_id}]
        p = self._call("Neutron create port", self.conn.network.create_port, **attrs)
        if p is None:  # the SDK's NotFound: the network (or subnet) does not exist
            raise OpenStackApiError(f"Neutron create port: network {network_id} not found")
        return _port(p)

    def set_allowed_address_pairs(self, port_id: str, pairs: list[dict[str, Any]]) -> None:
        self._call("Neutron update port", self.conn.network.update_port, port_id, allowed_address_pairs=pairs)

    def delete_port(self, port_id: str) -> None:
        self._call("Neutron delete port", self.conn.network.delete_port, port_id, ignore_missing=True)

    def port_floating_ips(self, port_id: str) -> list[str]:
        ips = self._call("Neutron list floating IPs", lambda: list(self.conn.network.ips(port_id=port_id))) or []
        return [str(_d(i).get("floating_ip_address")) for i in ips]

    def get_volume(self, volume_id: str) -> dict[str, Any] | None:
        v = self._call("Cinder get volume", self.conn.block_storage.get_volume, volume_id)
        return _d(v) if v is not None else None

    def detach_volume(self, server_id: str, volume_id: str, timeout: float) -> None:
        vol = self.get_volume(volume_id)
        if vol is None:
            return
        if any(str(a.get("server_id")) == server_id for a in vol.get("attachments") or []):
            self._call(
                "Nova detach volume", self.conn.compute.delete_volume_attachment, server_id, volume_id
            )
        deadline = time.monotonic() + timeout
        delay = 0.5
        while True:
            vol = self.get_volume(volume_id)
            if vol is None:
                return
            held = any(str(a.get("server_id")) == server_id for a in vol.get("attachments") or [])
            if not held and vol.get("status") == "available":
                return
            if time.monotonic() >= deadline:
                raise OpenStackApiError(
                    f"Cinder: volume {volume_id} still {vol.get('status')} {timeout:.0f} s after "
                    f"detaching it from server {server_id}"
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 3.0)

    def find_image(self, name_or_id: str) -> dict[str, Any] | None:
        i = self._call("Glance find image", self.conn.image.find_image, name_or_id, ignore_missing=True)
        return _d(i) if i is not None else None

    def upload_image(self, name: str, data: bytes, disk_format: str, container_format: str) -> dict[str, Any]:
        img = self._call(
            "Glance upload image",
            self.conn.image.create_image,
            name=name,
            data=data,
            disk_format=disk_format,
            container_format=container_format,
            wait=True,
        )
        img = self._call("Glance image status", self.conn.image.wait_for_status, img, "active", None, 2, 300)
        return _d(img)

    def find_flavor(self, name_or_id: str) -> dict[str, Any] | None:
        f = self._call("Nova find flavor", self.conn.compute.find_flavor, name_or_id, ignore_missing=True)
        return _d(f) if f is not None else None

    def list_flavors(self) -> list[dict[str, Any]]:
        return [_d(f) for f in self._call("Nova list flavors", lambda: list(self.conn.compute.flavors()))]
