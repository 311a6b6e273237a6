"""`vnfm demo --vim openstack --openrc PATH`: the basic lifecycle on a real OpenStack (Heat), every
step checked against Nova and Neutron. run.py imports this module only for --vim openstack: the
OpenStack adapter it uses is not needed otherwise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vnfm.adapters.infra.openstack.cloud import SdkCloud
from vnfm.adapters.infra.openstack.driver import stack_name_of
from vnfm.adapters.infra.openstack.openrc import access_info, read_openrc
from vnfm.domain.model import Vim
from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.demo.basic import Demo, vnfcs_of
from vnfm.entrypoints.cli.demo.runner import Echo, Step, StepFailed
from vnfm.entrypoints.cli.output import mask_text

EXAMPLE_VNFD_IMAGE = "ubuntu-20.04-server-cloudimg-amd64"  # sw_image_data name of both VDUs


def load_openrc(openrc: Path, echo: Echo) -> dict[str, str] | None:
    """The variables of the openrc file (read, never executed); None, with the reason echoed, when
    it cannot be read or names no OS_AUTH_URL."""
    try:
        env = read_openrc(openrc)
    except OSError as e:
        echo(f"Error: cannot read {openrc}: {e.strerror}")
        return None
    if not env.get("OS_AUTH_URL"):
        echo(f"Error: {openrc} has no OS_AUTH_URL")
        return None
    return env


def reported_ports(vnfc: dict[str, Any]) -> dict[str, list[str]]:
    """Port id -> sorted addresses, as the instance reports them for one VNFC."""
    reported: dict[str, list[str]] = {}
    for cp in vnfc.get("vnfcCpInfo") or []:
        addrs = [a for pr in cp.get("cpProtocolInfo") or []
                 for ip in (pr.get("ipOverEthernet") or {}).get("ipAddresses") or []
                 for a in ip.get("addresses") or []]
        reported[str(cp.get("vnfLinkPortId"))] = sorted(addrs)
    return reported


class OpenStackDemo(Demo):
    """`vnfm demo --vim openstack --openrc PATH`: the default lifecycle on a real OpenStack (Heat).

    The cloud of the openrc file is registered as a VIM (POST /vnfm/v1/vims) and named by the
    instantiate request's vimConnectionInfo; the VNF's CPs go on one existing network (given by
    name or id). After every step the servers of the instance are looked up in Nova (each must be
    ACTIVE) and their ports in Neutron (ids and addresses as the instance reports them). The
    hooks of the example package are bound to the `noop` management driver (run_demo does that):
    the demo installs no Kubernetes on the servers."""

    def __init__(
        self,
        client: VnfmClient,
        echo: Echo,
        *,
        openrc: dict[str, str],
        network: str = "vnfm-ci-net",
        image: str | None = None,
        timeout: float = 600.0,
        flavour: str = "simple",
    ) -> None:
        super().__init__(client, echo, timeout=timeout, flavour=flavour)
        self.openrc = openrc
        self.network = network
        self.image = image
        self.vim_id: str | None = None
        self.network_id: str | None = None
        self._cloud: Any = None

    def cloud(self) -> Any:
        """An SdkCloud on the same credentials, to check what Nova and Neutron report."""
        if self._cloud is None:
            self._cloud = SdkCloud(Vim(vim_type="openstack", name="demo-check", access_info=access_info(self.openrc)))
        return self._cloud

    def close(self) -> None:
        if self._cloud is not None:
            self._cloud.close()
            self._cloud = None

    # --- steps ---
    def register_vim(self) -> str:
        try:
            info = access_info(self.openrc)
        except ValueError as e:
            raise StepFailed(str(e)) from None
        try:
            cloud = self.cloud()
            net = cloud.conn.network.find_network(self.network)
        except Exception as e:  # noqa: BLE001 - any SDK/auth error ends the step with its message
            raise StepFailed(f"the OpenStack cloud does not answer: {mask_text(str(e))[:300]}") from None
        if net is None:
            raise StepFailed(f"network {self.network!r} does not exist in the cloud (give one with --network)")
        self.network_id = str(net.id)
        image = self.image or EXAMPLE_VNFD_IMAGE
        if cloud.find_image(image) is None:
            raise StepFailed(
                f"image {image!r} is not in Glance: upload it, or name an existing one with --image "
                "(the local bring-up of ci/openstack has vnfm-ci-image)"
            )
        body = {"name": "demo-openstack", "vimType": "openstack", "accessInfo": info}
        vim = self.client.register_vim(body)
        self.vim_id = str(vim["id"])
        shown = self.client.get_vim(self.vim_id)
        return (
            f"VIM {self.vim_id} at {info['authUrl']} (accessInfo as the API shows it: "
            f"{json.dumps(shown.get('accessInfo'))}); network {self.network} = {self.network_id}; "
            f"image {image}"
        )

    def instantiate_body(self) -> dict[str, Any]:
        assert self.vim_id is not None and self.network_id is not None
        body = super().instantiate_body()
        body["vimConnectionInfo"] = [{"id": "demo-vim-connection", "vimId": self.vim_id, "vimType": "openstack"}]
        cp_cfg = [{"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET"}]}]
        body["extVirtualLinks"] = [
            {"id": f"net-{cpd}", "resourceId": self.network_id, "extCps": [{"cpdId": cpd, "cpConfig": cp_cfg}]}
            for cpd in ("masterNode_CP1", "workerNode_CP2")
        ]
        if self.image:
            body["additionalParams"]["nfv"] = {
                "VDU": {"masterNode": {"image": self.image}, "workerNode": {"image": self.image}}
            }
        return body

    def _task(self, op_id: str) -> str:
        text = super()._task(op_id)
        return f"{text}; {self.check_cloud()}"

    def heal_vnfc(self) -> str:
        text = super().heal_vnfc()
        return f"{text}; {self.check_cloud()}"

    def check_cloud(self) -> str:
        """Every VNFC's server is ACTIVE in Nova, its ports in Neutron are the reported ones."""
        vnfcs = vnfcs_of(self._show())
        cloud = self.cloud()
        problems: list[str] = []
        for v in vnfcs:
            sid = str((v.get("computeResource") or {}).get("resourceId"))
            server = cloud.get_server(sid)
            if server is None or server.get("status") != "ACTIVE":
                problems.append(f"server {sid}: {'missing' if server is None else server.get('status')}")
                continue
            nova_ports = {str(p["id"]): sorted(f["ip_address"] for f in p.get("fixed_ips") or [])
                          for p in cloud.server_ports(sid)}
            reported = reported_ports(v)
            if nova_ports != reported:
                problems.append(f"VNFC {v.get('id')}: Neutron has ports {nova_ports}, the instance reports {reported}")
            else:
                ports = ", ".join(f"{pid[:8]} {'/'.join(a)}" for pid, a in reported.items())
                self.echo(f"      {v.get('vduId')}: server {sid} ACTIVE; port {ports}")
        if problems:
            raise StepFailed("the cloud disagrees: " + "; ".join(problems))
        if not vnfcs:
            assert self.state.vnf_id is not None
            if cloud.find_stack(stack_name_of(self.state.vnf_id)) is not None:
                raise StepFailed("the instance has no VNFCs but its Heat stack still exists")
            return "no stack left in Heat"
        return f"{len(vnfcs)} server(s) ACTIVE in Nova with the reported ports"

    def deregister_vim(self) -> str:
        assert self.vim_id is not None
        self.client.delete_vim(self.vim_id)
        return f"VIM {self.vim_id} deregistered"

    def final_state(self) -> str:
        parts: list[str] = []
        if self.state.vnf_id is not None:
            parts.append(self.instance_state())
            try:
                stack = self.cloud().find_stack(stack_name_of(self.state.vnf_id))
                parts.append("Heat stack: " + (f"{stack['stack_name']} {stack['stack_status']}" if stack else "none"))
            except Exception as e:  # noqa: BLE001 - only a report
                parts.append(f"Heat: not available ({mask_text(str(e))[:200]})")
        return "; ".join(parts)

    def steps(self, csar: bytes) -> list[Step]:
        base = super().steps(csar)
        return [("register the OpenStack cloud as a VIM", self.register_vim), *base,
                ("deregister the VIM", self.deregister_vim)]


