"""Keystone objects and base resources of the local OpenStack (run with the cloud venv's Python).

Usage: cloud_setup.py identity | wait-compute | resources
Admin credentials come from the OS_* environment (bringup.sh sets them); the service password
from VNFM_OS_SERVICE_PASSWORD. Every step is idempotent.
"""

import os
import sys
import time

import openstack

REGION = "RegionOne"
SERVICES = {
    # name: (type, port, path)
    "heat": ("orchestration", 8004, "/v1/%(tenant_id)s"),
    "nova": ("compute", 8774, "/v2.1"),
    "neutron": ("network", 9696, ""),
    "placement": ("placement", 8778, ""),
    "glance": ("image", 9292, ""),
    "cinder": ("block-storage", 8776, "/v3/%(project_id)s"),
}


def conn():
    return openstack.connect(
        auth_url=os.environ["OS_AUTH_URL"],
        username=os.environ["OS_USERNAME"],
        password=os.environ["OS_PASSWORD"],
        project_name=os.environ["OS_PROJECT_NAME"],
        user_domain_name="Default",
        project_domain_name="Default",
        region_name=REGION,
    )


def identity():
    c = conn()
    pw = os.environ["VNFM_OS_SERVICE_PASSWORD"]
    idc = c.identity
    default = idc.find_domain("default")
    service = idc.find_project("service", domain_id=default.id) or idc.create_project(
        name="service", domain_id=default.id
    )
    roles = {}
    for name in ("admin", "member", "reader", "service", "heat_stack_user", "heat_stack_owner"):
        roles[name] = idc.find_role(name) or idc.create_role(name=name)
    for user_name, (stype, port, path) in SERVICES.items():
        user = idc.find_user(user_name, domain_id=default.id)
        if user is None:
            user = idc.create_user(name=user_name, password=pw, domain_id=default.id)
        else:
            idc.update_user(user, password=pw)
        for role in ("admin", "service"):
            idc.assign_project_role_to_user(service, user, roles[role])
        svc = next((s for s in idc.services() if s.type == stype), None) or idc.create_service(
            name=user_name, type=stype
        )
        have = {e.interface for e in idc.endpoints(service_id=svc.id)}
        for iface in ("public", "internal", "admin"):
            if iface not in have:
                idc.create_endpoint(
                    service_id=svc.id, interface=iface, url=f"http://127.0.0.1:{port}{path}", region_id=REGION
                )
    heat_domain = idc.find_domain("heat") or idc.create_domain(name="heat", description="Heat stack users")
    hda = idc.find_user("heat_domain_admin", domain_id=heat_domain.id)
    if hda is None:
        hda = idc.create_user(name="heat_domain_admin", password=pw, domain_id=heat_domain.id)
    else:
        idc.update_user(hda, password=pw)
    idc.assign_domain_role_to_user(heat_domain, hda, roles["admin"])
    admin_project = idc.find_project(os.environ["OS_PROJECT_NAME"], domain_id=default.id)
    admin_user = idc.find_user(os.environ["OS_USERNAME"], domain_id=default.id)
    idc.assign_project_role_to_user(admin_project, admin_user, roles["heat_stack_owner"])


def wait_compute(deadline_s=180.0):
    c = conn()
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            services = [s for s in c.compute.services() if s.binary == "nova-compute"]
            if services and all(s.state == "up" and s.status == "enabled" for s in services):
                hyps = list(c.compute.hypervisors())
                if hyps:
                    return
        except Exception as exc:  # APIs still starting
            print(f"waiting for nova-compute: {exc}", file=sys.stderr)
        time.sleep(2)
    raise SystemExit("nova-compute did not register in time")


def resources():
    c = conn()
    for name, vcpus, ram, disk in (("m1.tiny", 1, 512, 1), ("m1.small", 1, 2048, 20), ("m1.medium", 2, 4096, 40)):
        if c.compute.find_flavor(name) is None:
            c.compute.create_flavor(name=name, vcpus=vcpus, ram=ram, disk=disk)
    image_name = os.environ.get("VNFM_OS_IMAGE", "vnfm-ci-image")
    if c.image.find_image(image_name) is None:
        img = c.image.create_image(
            name=image_name, data=os.urandom(1024 * 1024), disk_format="raw", container_format="bare",
            visibility="public", wait=True,
        )
        c.image.wait_for_status(img, status="active", wait=60)
    net_name = os.environ.get("VNFM_OS_NETWORK", "vnfm-ci-net")
    net = c.network.find_network(net_name)
    if net is None:
        net = c.network.create_network(name=net_name, shared=True)
    subnets = list(c.network.subnets(network_id=net.id))
    if not subnets:
        subnets = [
            c.network.create_subnet(name=f"{net_name}-subnet", network_id=net.id, ip_version=4, cidr="10.91.0.0/24")
        ]
    # Floating IPs: an external network and a router from it to the test network (API only: no L3
    # agent, nothing is routed; Neutron still allocates and associates the addresses).
    ext = c.network.find_network("vnfm-ci-ext")
    if ext is None:
        ext = c.network.create_network(name="vnfm-ci-ext", is_router_external=True)
    if not list(c.network.subnets(network_id=ext.id)):
        c.network.create_subnet(
            name="vnfm-ci-ext-subnet", network_id=ext.id, ip_version=4, cidr="172.24.91.0/24", is_dhcp_enabled=False
        )
    router = c.network.find_router("vnfm-ci-router")
    if router is None:
        router = c.network.create_router(name="vnfm-ci-router", external_gateway_info={"network_id": ext.id})
        c.network.add_interface_to_router(router, subnet_id=subnets[0].id)


def check():
    """Exit 0 when the cloud answers: a token, Heat's API and an up hypervisor."""
    c = conn()
    list(c.orchestration.stacks())
    services = [s for s in c.compute.services() if s.binary == "nova-compute"]
    if not services or any(s.state != "up" for s in services):
        raise SystemExit("nova-compute is not up")
    if c.network.find_network(os.environ.get("VNFM_OS_NETWORK", "vnfm-ci-net")) is None:
        raise SystemExit("the test network is missing")


if __name__ == "__main__":
    {"identity": identity, "wait-compute": wait_compute, "resources": resources, "check": check}[sys.argv[1]]()
