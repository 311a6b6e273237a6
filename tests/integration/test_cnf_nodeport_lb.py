"""The CNF NodePort driver's hooks (instantiate_end, heal_end entire, terminate_end) over real SSH,
with the REAL HAProxy as the external load balancer on a test host and real TCP traffic through
each NodePort frontend to backends on node test hosts.

The Kubernetes side is the simulator's own API server (`vnfm.adapters.infra.simulator.k8sapi`,
real HTTPS, TLS verified against its CA, the real `kubernetes` client in the driver) run directly
in this process over a tiny in-memory store (`ClusterStore`, the two calls the server makes of the
simulated cloud) holding one cluster: two Ready nodes whose InternalIPs are the node test hosts,
and a ServiceAccount token. No simulated cloud, no engine: the test creates the package's Services
through the API itself (as the Kubernetes infra driver would), so their NodePorts are allocated by
the API (one fixed, one random), and re-creates the random one before the heal.

Another owner's parts on the same LB (the Kubespray cluster's `cluster` file with its NodePort
pool, another CNF's file) are written with `LbFrontends` directly and must stay byte-identical and
keep serving. The cluster's VIM names that pool (`extra.nodeport_pool`, as the Kubespray driver
registers it): the CNF's frontends route to it, so when the cluster's part changes its pool (a
scale) they follow, and after the LB is rebuilt (a heal of its VM) the CNF's part is re-applied
from the CNF's recorded state. The driver logs in to the LB as a non-root user (`ops`, the seeds'
`ubuntu`) and becomes root with `sudo -n`, as on every VNFC."""

from __future__ import annotations

import asyncio
import copy
import secrets
import uuid
from pathlib import Path
from typing import Any, TypeVar

import asyncssh
import pytest
import yaml
from kubernetes import client

from tests.integration.conftest import require
from tests.integration.harness import TestHost
from tests.integration.kubernetes.kubeapi import ClusterStore
from tests.integration.test_kubespray_standin_driver import Vims
from tests.integration.test_lb_frontends import CONF_DIR, converged, refused, start_servers
from tests.integration.test_ssh_become import ADD_USERS
from vnfm.adapters.infra.simulator.k8sapi.server import KubeApiServer
from vnfm.adapters.infra.simulator.twin.base import KEY, empty, sha
from vnfm.adapters.kube.client import api_client
from vnfm.adapters.mgmt.cnf_nodeport import part
from vnfm.adapters.mgmt.cnf_nodeport.driver import CnfNodePortDriver, owner_of
from vnfm.adapters.nodes.ssh import SshAccess, SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.model import LcmOperation, Vim, VnfInstance
from vnfm.nodesteps.lb import Backend, Frontend, LbFrontends, ServerPool
from vnfm.packaging.csar import read_csar
from vnfm.packaging.csar_files import ExtractedPackage, build_csar
from vnfm.packaging.k8s_manifests import OWNER_LABEL
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import LcmContext

pytestmark = pytest.mark.integration
T = TypeVar("T")

PACKAGE = Path(__file__).resolve().parents[1] / "api" / "packages" / "cnf_nodeport"
FIXED = "Files/kubernetes/service_with_nodeport.yaml"  # nginx-service-np, nodePort 30422
RANDOM = "Files/kubernetes/service_without_nodeport.yaml"  # nginx-service, a NodePort the API picks
API, LB_API, OTHER_CNF_PORT = 6443, 8383, 30999


def cluster_state(nodes: list[tuple[str, str, TestHost]], token: str) -> dict[str, Any]:
    st = empty()
    for name, role, h in nodes:
        st["nodes"][name] = {"name": name, "role": role, "server_id": f"server-{name}", "addresses": [h.address],
                             "labels": {"kubernetes.io/hostname": name}, "cordoned": False, "ready": True,
                             "ready_at": 0.0}
    st["service_accounts"]["kube-system/vnfm"] = {"token_sha256": sha(token)}
    return st


class Cnf:
    """The driver's side: one CNF instance on the cluster's Kubernetes VIM, its hooks run as the
    engine runs them (fresh LcmContext each time, the driver's state kept between hooks)."""

    def __init__(self, vim: Vim, lb: TestHost) -> None:
        self.vnfd = parse_vnfd(read_csar(build_csar(PACKAGE)))
        self.package = ExtractedPackage(PACKAGE)
        self.vims = Vims()
        self.vims.register(vim)
        self.params: dict[str, Any] = {
            "lcm-kubernetes-def-files": [FIXED, RANDOM],
            "lcm-kubernetes-external-lb": {"script_path": "Scripts/configure_lb.sh", "external_lb_param": {
                "ssh_ip": lb.address, "ssh_username": "ops", "ssh_private_key": lb.bed.client_key_pem}},
        }
        self.instance = VnfInstance(id=str(uuid.uuid4()), vnfd_id=self.vnfd.id, flavour_id="simple",
                                    additional_params=copy.deepcopy(self.params), vim_id=vim.id)
        self.state: dict[str, Any] = {}
        self.progress: list[str] = []
        self.driver = CnfNodePortDriver()

    async def hook(self, hook: str, operation: LcmOperation, *, heal_entire: bool = False) -> None:
        ctx = LcmContext(hook=hook, operation=operation, op_id=str(uuid.uuid4()), instance=self.instance,
                         request={}, additional_params=copy.deepcopy(self.params), vnfd=self.vnfd,
                         flavour=self.vnfd.flavours["simple"], package=self.package,
                         resources=self.instance.resources, heal_entire=heal_entire, vims=self.vims,
                         state=self.state, progress=self.progress.append, nodes=SshAccess(),
                         params=self.driver.declared.for_operation(str(operation), self.params, self.params))
        await self.driver.handle(hook, ctx)


def create_service(vim: Vim, path: str, owner: str) -> int:
    """Creates the package's Service through the API, labelled as `owner`'s (as the Kubernetes infra
    driver applies it); its (first) NodePort as allocated."""
    body = yaml.safe_load((PACKAGE / path).read_text())
    body["metadata"].setdefault("labels", {})[OWNER_LABEL] = owner
    with api_client(vim) as api:
        svc = client.CoreV1Api(api).create_namespaced_service("default", body)
    return int(svc.spec.ports[0].node_port)


def delete_service(vim: Vim, name: str) -> None:
    with api_client(vim) as api:
        client.CoreV1Api(api).delete_namespaced_service(name, "default")


async def test_cnf_nodeport_driver_hooks_over_ssh_with_real_haproxy(make_hosts, ssh: SshExecutor,
                                                                     tmp_path: Path) -> None:
    require("haproxy", "flock", "python3", "sudo", "useradd")
    lb, n1, n2 = make_hosts(3)
    nodes = [n1, n2]
    pub = asyncssh.import_private_key(lb.bed.client_key_pem).export_public_key().decode().strip()
    await ssh.run_script(lb.target(), ADD_USERS, env_secrets={"PUB": pub}, check=True, name="add users")

    # ---- the cluster's Kubernetes API (the simulator's server over an in-memory store)
    cluster_id, token = str(uuid.uuid4()), secrets.token_urlsafe(24)
    store = ClusterStore()
    store.update_extras(cluster_id, lambda ex: ex.update(
        {KEY: cluster_state([("masternode-0", "master", n1), ("workernode-0", "worker", n2)], token)}))
    server = KubeApiServer(tmp_path / "kube-api")
    try:
        ep = server.endpoint(store, cluster_id)
        vim = Vim(vim_type="kubernetes", name="itest-cluster",
                  access_info={"authUrl": ep.url, "bearer_token": token, "ssl_ca_cert": ep.ca_pem},
                  extra={"vnf_instance_id": cluster_id,
                         "nodeport_pool": {"addresses": [lb.address], "owner": "cluster", "name": "nodeport"}})
        await _lifecycle(ssh, vim, lb, nodes)
    finally:
        server.stop()


async def _lifecycle(ssh: SshExecutor, vim: Vim, lb: TestHost, nodes: list[TestHost]) -> None:
    steps = SshStepExecutor(ssh, {lb.address: lb.target()})

    async def read(path: str) -> bytes:
        return await ssh.get_file(lb.target(), path)

    async def listing() -> list[str]:
        return (await ssh.run(lb.target(), ["ls", "-A", CONF_DIR], check=True)).stdout.split()

    def backends(port: int) -> set[str]:
        return {f"{n.name}:{port}" for n in nodes}

    # ---- the other owners already on the LB: the Kubespray cluster's part and another CNF's
    cnf = Cnf(vim, lb)
    fixed = await asyncio.to_thread(create_service, vim, FIXED, cnf.instance.id)
    first_random = await asyncio.to_thread(create_service, vim, RANDOM, cnf.instance.id)
    assert fixed == 30422 and 30000 <= first_random <= 32767 and first_random != fixed
    await asyncio.gather(*(start_servers(ssh, n, [API, OTHER_CNF_PORT, fixed, first_random]) for n in nodes))
    def cluster_part(pool: list[TestHost]) -> LbFrontends:
        return LbFrontends("cluster", (Frontend("k8s-api", LB_API, tuple(Backend(n.name, n.address, API)
                                                                         for n in nodes)),),
                           pools=(ServerPool("nodeport", tuple((n.name, n.address) for n in pool)),))

    cluster = cluster_part(nodes)
    other = LbFrontends("cnf-other", (Frontend("svc", OTHER_CNF_PORT, tuple(Backend(n.name, n.address,
                                                                                    OTHER_CNF_PORT)
                                                                            for n in nodes)),))
    for step in (cluster, other):
        assert (await steps.run(lb.address, step)).changed
    cluster_file, other_file = await read(f"{CONF_DIR}/cluster.cfg"), await read(f"{CONF_DIR}/cnf-other.cfg")

    async def others_intact() -> None:
        assert await read(f"{CONF_DIR}/cluster.cfg") == cluster_file
        assert await read(f"{CONF_DIR}/cnf-other.cfg") == other_file
        await converged(lb.address, LB_API, backends(API))
        await converged(lb.address, OTHER_CNF_PORT, backends(OTHER_CNF_PORT))

    # ---- instantiate_end: a frontend per NodePort as the API reports it, to every node
    mine = f"{owner_of(cnf.instance.id)}.cfg"
    await cnf.hook("instantiate_end", LcmOperation.INSTANTIATE)
    for port in (fixed, first_random):
        await converged(lb.address, port, backends(port))
    assert sorted(f["port"] for f in cnf.state["frontends"]) == sorted([fixed, first_random])
    assert await listing() == sorted([".active", ".lock", "cluster.cfg", "cnf-other.cfg", mine])
    assert any(f"default/nginx-service 80:{first_random}" in p for p in cnf.progress)
    assert "routed to the cluster's NodePort pool" in cnf.progress[-1]
    assert "default_backend vnfm_cluster_pool_nodeport" in (await read(f"{CONF_DIR}/{mine}")).decode()
    st = await ssh.run(lb.target(), ["stat", "-c", "%U", f"{CONF_DIR}/{mine}"], check=True)
    assert st.stdout.strip() == "root"  # written through sudo by the `ops` login
    await others_intact()
    # ---- the cluster scales in (n2 leaves its pool) and out again: the CNF's frontends follow
    assert (await steps.run(lb.address, cluster_part(nodes[:1]))).changed
    await converged(lb.address, fixed, {f"{nodes[0].name}:{fixed}"})
    assert (await steps.run(lb.address, cluster_part(nodes))).changed
    await converged(lb.address, fixed, backends(fixed))
    # a re-run changes nothing
    mine_file = await read(f"{CONF_DIR}/{mine}")
    await cnf.hook("instantiate_end", LcmOperation.INSTANTIATE)
    assert cnf.progress[-1].endswith("(unchanged)") and await read(f"{CONF_DIR}/{mine}") == mine_file

    # ---- heal entire: the CNF's objects were re-created, the random NodePort changed
    healed = first_random
    for _ in range(5):  # a fresh uid draws a fresh port; the freed old one may come back
        await asyncio.to_thread(delete_service, vim, "nginx-service")
        healed = await asyncio.to_thread(create_service, vim, RANDOM, cnf.instance.id)
        if healed != first_random:
            break
    assert healed != first_random
    await asyncio.gather(*(start_servers(ssh, n, [healed]) for n in nodes))
    await cnf.hook("heal_end", LcmOperation.HEAL, heal_entire=True)
    await converged(lb.address, healed, backends(healed))
    await converged(lb.address, fixed, backends(fixed))
    await refused(lb.address, first_random)  # the old frontend is gone (its backends still listen)
    assert sorted(f["port"] for f in cnf.state["frontends"]) == sorted([fixed, healed])
    await others_intact()
    # a heal of a pod (not entire) changes nothing on the LB
    mine_file = await read(f"{CONF_DIR}/{mine}")
    await cnf.hook("heal_end", LcmOperation.HEAL)
    assert await read(f"{CONF_DIR}/{mine}") == mine_file

    # ---- the LB's VM is replaced (an empty LB): the cluster's part, then every CNF's part from its
    # recorded state (what the Kubespray driver's heal of the LB VNFC does)
    await ssh.run(lb.target(), f"pid=$(cat /run/haproxy.pid); kill $pid; for i in $(seq 200); do kill -0 $pid "
                  f"2>/dev/null || break; sleep 0.05; done; rm -rf {CONF_DIR} /etc/haproxy/vnfm.cfg", check=True)
    await refused(lb.address, fixed)
    assert (await steps.run(lb.address, cluster)).changed
    again = part.restore(cnf.instance.id, cnf.state, [lb.address])
    assert again is not None and (await steps.run(lb.address, again)).changed
    await converged(lb.address, fixed, backends(fixed))
    await converged(lb.address, healed, backends(healed))
    assert await read(f"{CONF_DIR}/{mine}") == mine_file
    for step in (other,):  # the other CNF's part (it routes to its own backends) comes back the same way
        assert (await steps.run(lb.address, step)).changed

    # ---- terminate_end: only this CNF's part goes
    await cnf.hook("terminate_end", LcmOperation.TERMINATE)
    assert await listing() == [".active", ".lock", "cluster.cfg", "cnf-other.cfg"]
    for port in (fixed, healed):
        await refused(lb.address, port)
    assert "frontends" not in cnf.state
    await others_intact()
    text = "\n".join(cnf.progress)
    assert "PRIVATE KEY" not in text and vim.access_info["bearer_token"] not in text
