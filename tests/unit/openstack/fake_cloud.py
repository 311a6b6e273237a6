"""A small in-memory stand-in for the OpenStack calls the Heat driver makes (the `Cloud` interface).

It plays just enough of Heat to check the driver: AutoScalingGroups of nested server + port
templates, `desired_capacity` from the template sent, members marked unhealthy removed first on
shrink (as Heat does), a server marked unhealthy replaced on update with its port kept, stack
status going through *_IN_PROGRESS (one poll) to *_COMPLETE, and an image that Glance lacks making
the create fail with a Heat-like reason. Neutron: ports on networks that appear on first use (one
subnet each; `networks[id]` sets port security or makes it full), allowed_address_pairs refused
on a port without port security, as Neutron does.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import yaml

from vnfm.adapters.infra.openstack.cloud import Cloud, OpenStackApiError

SERVER = "OS::Nova::Server"
PORT = "OS::Neutron::Port"


class FakeCloud(Cloud):
    def __init__(self) -> None:
        self.stacks: dict[str, dict[str, Any]] = {}  # every stack, nested ones too, by id
        self.resources: dict[str, list[dict[str, Any]]] = {}  # stack id -> its resources
        self.servers: dict[str, dict[str, Any]] = {}
        self.ports: dict[str, dict[str, Any]] = {}
        self.images: dict[str, dict[str, Any]] = {}
        self.networks: dict[str, dict[str, Any]] = {}  # id -> {"subnet_id", "port_security_enabled", "full"}
        self.flavors = [
            {"id": "f1", "name": "m1.tiny", "vcpus": 1, "ram": 512, "disk": 1},
            {"id": "f2", "name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20},
            {"id": "f3", "name": "m1.medium", "vcpus": 2, "ram": 4096, "disk": 40},
        ]
        self.calls: list[tuple[Any, ...]] = []
        self._clock = itertools.count(1)
        self._ip = itertools.count(10)

    # ------------------------------------------------------------------ Heat
    def find_stack(self, name_or_id: str) -> dict[str, Any] | None:
        st = self.stacks.get(name_or_id) or next(
            (s for s in self.stacks.values() if s["stack_name"] == name_or_id and not s.get("nested")), None
        )
        if st is None or st["stack_status"] == "DELETE_COMPLETE":
            return None
        view = {k: st[k] for k in ("id", "stack_name", "stack_status", "stack_status_reason", "updated_time")}
        if st.get("pending"):  # the next look sees the operation's end
            st["stack_status"], st["stack_status_reason"] = st.pop("pending")
            if st["stack_status"] == "DELETE_COMPLETE":
                self._drop(st["id"])
        return view

    def create_stack(
        self, name: str, template: dict[str, Any], files: dict[str, str], parameters: dict[str, Any], timeout_mins: int
    ) -> str:
        self.calls.append(("create_stack", name))
        sid = str(uuid.uuid4())
        self.stacks[sid] = {
            "id": sid,
            "stack_name": name,
            "stack_status": "CREATE_IN_PROGRESS",
            "stack_status_reason": "",
            "updated_time": None,
        }
        self.resources[sid] = []
        self._converge(sid, template, files, parameters, "CREATE")
        return sid

    def update_stack(
        self,
        stack: dict[str, Any],
        template: dict[str, Any],
        files: dict[str, str],
        parameters: dict[str, Any],
        timeout_mins: int,
    ) -> None:
        self.calls.append(("update_stack", stack["stack_name"], template, parameters))
        st = self.stacks[stack["id"]]
        st["stack_status"] = "UPDATE_IN_PROGRESS"
        st["updated_time"] = f"t{next(self._clock)}"
        self._converge(st["id"], template, files, parameters, "UPDATE")

    def delete_stack(self, stack: dict[str, Any]) -> None:
        self.calls.append(("delete_stack", stack["stack_name"]))
        st = self.stacks[stack["id"]]
        st["stack_status"] = "DELETE_IN_PROGRESS"
        st["pending"] = ("DELETE_COMPLETE", "")

    def list_resources(self, stack_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.resources.get(stack_id, [])]

    def mark_unhealthy(self, stack_id: str, resource_name: str, reason: str) -> None:
        self.calls.append(("mark_unhealthy", stack_id, resource_name))
        r = next(r for r in self.resources[stack_id] if r["resource_name"] == resource_name)
        r["resource_status"] = "CHECK_FAILED"
        r["resource_status_reason"] = reason

    # ------------------------------------------------------------------ what Heat does
    def _converge(
        self, sid: str, template: dict[str, Any], files: dict[str, str], params: dict[str, Any], action: str
    ) -> None:
        st = self.stacks[sid]
        nfv = params.get("nfv") or {}
        try:
            plain = {}
            for name, res in (template.get("resources") or {}).items():
                if res["type"] == "OS::Heat::AutoScalingGroup":
                    props = res["properties"]
                    nested = yaml.safe_load(files[props["resource"]["type"]])
                    self._group(sid, name, int(props["desired_capacity"]), nested, props["resource"]["properties"], nfv)
                elif res["type"] in (SERVER, PORT):
                    plain[name] = res
            self._member_resources(sid, plain, {}, nfv, {})
        except ValueError as exc:
            st["pending"] = (f"{action}_FAILED", f"Resource {action} failed: {exc}")
            return
        st["pending"] = (f"{action}_COMPLETE", "")

    def _group(
        self, sid: str, name: str, n: int, nested: dict[str, Any], member_props: dict[str, Any], nfv: dict[str, Any]
    ) -> None:
        top = self.resources[sid]
        gr = next((r for r in top if r["resource_name"] == name), None)
        if gr is None:
            gid = str(uuid.uuid4())
            self.stacks[gid] = {"id": gid, "stack_name": f"{name}-nested", "stack_status": "CREATE_COMPLETE",
                                "stack_status_reason": "", "updated_time": None, "nested": True}
            self.resources[gid] = []
            top.append(self._res(name, "OS::Heat::AutoScalingGroup", gid))
        else:
            gid = gr["physical_resource_id"]
        members = self.resources[gid]
        # Heat keeps the newest healthy members: failed (marked) ones sort first and go first.
        members.sort(key=lambda r: (r["resource_status"] != "CHECK_FAILED", r["creation_time"]))
        while len(members) > n:
            gone = members.pop(0)
            self._drop(gone["physical_resource_id"])
        while len(members) < n:
            mid = str(uuid.uuid4())
            self.stacks[mid] = {"id": mid, "stack_name": f"{name}-member", "stack_status": "CREATE_COMPLETE",
                                "stack_status_reason": "", "updated_time": None, "nested": True}
            self.resources[mid] = []
            members.append(self._res(uuid.uuid4().hex[:12], "base_hot_nested.yaml", mid))
        for m in members:
            self._member_resources(m["physical_resource_id"], nested.get("resources") or {}, member_props, nfv,
                                   nested)

    def _member_resources(
        self, mid: str, resources: dict[str, Any], props: dict[str, Any], nfv: dict[str, Any], nested: dict[str, Any]
    ) -> None:
        have = {r["resource_name"]: r for r in self.resources[mid]}

        def value(v: Any) -> Any:
            if isinstance(v, dict) and "get_param" in v:
                p = v["get_param"]
                if isinstance(p, list):  # [nfv, VDU, x, image] read from the top template's props
                    cur: Any = nfv
                    for k in p[1:]:
                        cur = (cur or {}).get(k)
                    return cur
                return value(props.get(p))
            return v

        for rname, res in resources.items():
            if res["type"] == PORT and rname not in have:
                pid = self._new_port(str(value(res["properties"]["network"])), name=rname)["id"]
                have[rname] = self._res(rname, PORT, pid)
                self.resources[mid].append(have[rname])
        for rname, res in resources.items():
            if res["type"] != SERVER:
                continue
            r = have.get(rname)
            if r is not None and r["resource_status"] != "CHECK_FAILED":
                continue
            image = value(res["properties"]["image"])
            if image not in self.images:
                raise ValueError(f"resources.{rname}.properties.image: No images matching {{'name': '{image}'}}.")
            if r is not None:
                self.servers.pop(r["physical_resource_id"], None)
                self.resources[mid].remove(r)
            srv = str(uuid.uuid4())
            self.servers[srv] = {"id": srv, "name": rname, "status": "ACTIVE", "image": {"id": image},
                                 "flavor": {"original_name": value(res["properties"]["flavor"])}}
            for net in res["properties"].get("networks") or []:
                port_res = have[net["port"]["get_resource"]]
                self.ports[port_res["physical_resource_id"]]["device_id"] = srv
            self.resources[mid].append(self._res(rname, SERVER, srv))

    def _res(self, name: str, rtype: str, physical: str) -> dict[str, Any]:
        return {"resource_name": name, "resource_type": rtype, "physical_resource_id": physical,
                "resource_status": "CREATE_COMPLETE", "resource_status_reason": "",
                "creation_time": f"2026-01-01T00:00:{next(self._clock):02d}Z"}

    def _drop(self, sid: str) -> None:
        for r in self.resources.pop(sid, []):
            if r["resource_type"] == SERVER:
                self.servers.pop(r["physical_resource_id"], None)
            elif r["resource_type"] == PORT:
                self.ports.pop(r["physical_resource_id"], None)
            else:
                self._drop(r["physical_resource_id"])
        st = self.stacks.get(sid)
        if st is not None and st.get("nested"):
            del self.stacks[sid]

    # ------------------------------------------------------------------ Neutron
    def network(self, network_id: str) -> dict[str, Any]:
        return self.networks.setdefault(
            network_id, {"subnet_id": f"subnet-of-{network_id}", "port_security_enabled": True, "full": False}
        )

    def _new_port(self, network_id: str, **attrs: Any) -> dict[str, Any]:
        net = self.network(network_id)
        if net["full"]:
            raise OpenStackApiError(f"Neutron create port: No more IP addresses available on network {network_id}.")
        pid = str(uuid.uuid4())
        port = {"id": pid, "name": "", "description": "", "network_id": network_id, "device_id": "",
                "device_owner": "", "mac_address": "fa:16:3e:00:00:01",
                "fixed_ips": [{"ip_address": f"10.0.0.{next(self._ip)}", "subnet_id": net["subnet_id"]}],
                "port_security_enabled": net["port_security_enabled"], "allowed_address_pairs": [],
                "created_at": f"2026-01-01T00:00:{next(self._clock):02d}Z"}
        port.update(attrs)
        self.ports[pid] = port
        return port

    def list_ports(self, *, device_id: str, device_owner: str) -> list[dict[str, Any]]:
        return [
            dict(p) for p in self.ports.values() if p["device_id"] == device_id and p["device_owner"] == device_owner
        ]

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
        self.calls.append(("create_port", network_id, name))
        if subnet_id not in (None, self.network(network_id)["subnet_id"]):
            raise OpenStackApiError(f"Neutron create port: subnet {subnet_id} is not on network {network_id}")
        return dict(self._new_port(network_id, name=name, description=description, device_id=device_id,
                                   device_owner=device_owner))

    def set_allowed_address_pairs(self, port_id: str, pairs: list[dict[str, Any]]) -> None:
        self.calls.append(("set_allowed_address_pairs", port_id, [p["ip_address"] for p in pairs]))
        port = self.ports.get(port_id)
        if port is None:
            return
        if pairs and not port["port_security_enabled"]:
            raise OpenStackApiError("Neutron update port: Port Security must be enabled in order to have allowed "
                                    "address pairs on a port.")
        port["allowed_address_pairs"] = [{"mac_address": port["mac_address"], **p} for p in pairs]

    def delete_port(self, port_id: str) -> None:
        self.calls.append(("delete_port", port_id))
        self.ports.pop(port_id, None)

    # ------------------------------------------------------------------ the other services
    def get_server(self, server_id: str) -> dict[str, Any] | None:
        return self.servers.get(server_id)

    def server_ports(self, server_id: str) -> list[dict[str, Any]]:
        return [p for p in self.ports.values() if p["device_id"] == server_id]

    def get_port(self, port_id: str) -> dict[str, Any] | None:
        port = self.ports.get(port_id)
        return None if port is None else {**port, "allowed_address_pairs": list(port["allowed_address_pairs"])}

    def port_floating_ips(self, port_id: str) -> list[str]:
        return []

    def get_volume(self, volume_id: str) -> dict[str, Any] | None:
        return None

    def detach_volume(self, server_id: str, volume_id: str, timeout: float) -> None:
        self.calls.append(("detach_volume", server_id, volume_id))

    def find_image(self, name_or_id: str) -> dict[str, Any] | None:
        return next((i for i in self.images.values() if name_or_id in (i["id"], i["name"])), None)

    def upload_image(self, name: str, data: bytes, disk_format: str, container_format: str) -> dict[str, Any]:
        self.calls.append(("upload_image", name, len(data), disk_format))
        img = {"id": str(uuid.uuid4()), "name": name, "disk_format": disk_format}
        self.images[img["id"]] = img
        return img

    def find_flavor(self, name_or_id: str) -> dict[str, Any] | None:
        return next((f for f in self.flavors if name_or_id in (f["id"], f["name"])), None)

    def list_flavors(self) -> list[dict[str, Any]]:
        return list(self.flavors)

    def add_image(self, name: str) -> str:
        img = {"id": str(uuid.uuid4()), "name": name}
        self.images[img["id"]] = img
        return img["id"]
