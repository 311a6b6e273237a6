"""The Kubespray driver's node steps over real SSH with the REAL ansible-core, on test hosts: one
is the operator's Ansible server, the others are nodes. Kubespray itself cannot run here (it
downloads Kubernetes binaries), so the Ansible server gets a STAND-IN Kubespray tree
(tests/fixtures/kubespray_standin: real playbooks in the layout of current releases, whose plays
target the hosts Kubespray's do, that fail unless the inventory has what Kubespray needs and every
host they reach takes the run key, and leave markers). Its
ansible.cfg turns host-key checking off as Kubespray's does: the runs must check the pinned keys
anyway."""

from __future__ import annotations

import base64
import io
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

from tests.integration.harness import TestHost
from vnfm.adapters.mgmt.kubespray.site import RunKey
from vnfm.adapters.nodes.ssh import SshAccess, SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import StepFailed
from vnfm.nodesteps.kubespray import (
    AuthorizedKey,
    InstallKubeconfig,
    InventoryHost,
    KubesprayCheckInventory,
    KubesprayInventory,
    KubesprayPlaybook,
    KubesprayRemoveHost,
    KubesprayRemoveInventory,
    ReadKubeconfig,
)
from vnfm.service.ports import NodeHost, NodeLogin

pytestmark = pytest.mark.integration

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "kubespray_standin"
ROOT = "/opt/kubespray"
INV = f"{ROOT}/inventory/mycluster"
OWNER = "inst-kubespray-1"
PROXY_PW = "pr0xy-s3cret-ks"
HTTPS_PROXY = f"http://proxyuser:{PROXY_PW}@10.232.0.1:3128"
MARKER = f"vnfm-kubespray-{OWNER}"
MARKS = "/var/lib/kubespray-standin"


def _ansible_playbook() -> Path:
    exe = Path(sys.executable).parent / "ansible-playbook"
    if not exe.is_file():
        pytest.skip("ansible-core is not installed in this virtualenv (pip install ansible-core)")
    return exe


def _tree_tar() -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(TREE, arcname=".")
    return base64.b64encode(buf.getvalue()).decode()


async def _install_ansible_server(ssh: SshExecutor, host: TestHost) -> None:
    """The stand-in tree at ROOT and the real ansible-playbook on PATH; a known_hosts of the
    operator's own that the driver must leave alone."""
    script = (f'set -euo pipefail\nmkdir -p {ROOT}\nchmod 755 {ROOT}\nprintf "%s" "$TREE_B64" | base64 -d | '
              f'tar -xz -C {ROOT}\nln -sf {_ansible_playbook()} /usr/local/bin/ansible-playbook\n'
              'mkdir -p /root/.ssh\necho "operator.example ssh-ed25519 AAAAoperator" > /root/.ssh/known_hosts\n')
    res = await ssh.run_script(host.target(), script, stdin_vars={"TREE_B64": _tree_tar()}, timeout=60)
    assert res.ok, res.stderr


def _session(hosts: Sequence[TestHost]) -> SshStepExecutor:
    bed = hosts[0].bed
    login = NodeLogin("root", private_key=bed.client_key_pem)
    pins = {f"host:{h.address}": h.host_key for h in hosts}
    return SshAccess(timeout=300).session(OWNER, [NodeHost(h.address, login) for h in hosts], pins)


def _inventory(nodes: dict[str, tuple[TestHost, str]], lb: str) -> KubesprayInventory:
    hosts = tuple(InventoryHost(name, h.address, h.address, "root", role) for name, (h, role) in nodes.items())
    known = tuple((h.address, h.host_key) for h, _ in nodes.values())
    return KubesprayInventory(ROOT, INV, OWNER, hosts, known, "192.168.0.0/16", "10.199.187.0/24",
                              ssl_addresses=(lb,), https_proxy_env="VNFM_HTTPS_PROXY")


def _playbook(key: RunKey, playbook: str, limit: Sequence[str] = (),
              extra: Sequence[tuple[str, str]] = ()) -> KubesprayPlaybook:
    return KubesprayPlaybook(ROOT, INV, OWNER, playbook, tuple(limit), tuple(extra), private_key=key.private,
                             env=(("VNFM_HTTPS_PROXY", HTTPS_PROXY),), timeout_s=240)


async def _cat(ssh: SshExecutor, h: TestHost, path: str) -> str | None:
    res = await ssh.run(h.target(), f"cat {path}")
    return res.stdout if res.ok else None


async def test_kubespray_standin_cluster_scale_remove_and_terminate(make_hosts, ssh: SshExecutor) -> None:
    ansible, m, w1, w2, w3, lb = make_hosts(6)
    await _install_ansible_server(ssh, ansible)
    ex = _session([ansible, m, w1, w2, w3, lb])
    key = RunKey.generate()
    nodes = {"masternode-0": (m, "master"), "workernode-0": (w1, "worker"), "workernode-1": (w2, "worker")}
    try:
        # ---- instantiate: check, inventory, run key on the nodes, cluster.yml
        await ex.run(ansible.address, KubesprayCheckInventory(ROOT, INV, OWNER))
        res = await ex.run(ansible.address, _inventory(nodes, lb.address))
        assert res.changed and res.data["created"]
        assert not (await ex.run(ansible.address, _inventory(nodes, lb.address))).changed
        for h in (m, w1, w2):
            await ex.run(h.address, AuthorizedKey(MARKER, key.public))
        run = await ex.run(ansible.address, _playbook(key, "cluster.yml"))
        assert set(run.data["recap"]) >= set(nodes) and run.data["recap"]["masternode-0"]["failed"] == 0
        for name, (h, role) in nodes.items():
            mark = await _cat(ssh, h, f"{MARKS}/cluster.yml")
            assert mark is not None and f"node={name}" in mark and f"role={role}" in mark, (name, mark)
            assert "https_proxy=set" in mark and "http_proxy=unset" in mark
            assert "pods=192.168.0.0/16" in mark and "services=10.199.187.0/24" in mark
        sans = await _cat(ssh, m, f"{MARKS}/apiserver-sans")
        assert sans is not None and lb.address in sans.split()
        # the inventory on the Ansible server: hosts.yaml as YAML with the groups; no secret anywhere
        hosts_yaml = yaml.safe_load(await _cat(ssh, ansible, f"{INV}/hosts.yaml") or "")
        assert set(hosts_yaml["all"]["children"]) == {"kube_control_plane", "etcd", "kube_node", "k8s_cluster",
                                                       "calico_rr"}
        key_line = key.private.splitlines()[1]
        places = f"{ROOT} /root/.ssh /root/.ansible /tmp /var/tmp"
        leak = await ssh.run(ansible.target(), f"grep -rlF -e {PROXY_PW} -e {key_line} {places} 2>/dev/null || true")
        assert leak.stdout.strip() == "", leak.stdout

        # ---- the admin kubeconfig to the LB (kubectl jump host)
        kc = (await ex.run(m.address, ReadKubeconfig())).data["kubeconfig"]
        await ex.run(lb.address, InstallKubeconfig(kc, f"https://{lb.address}:8383"))
        installed = yaml.safe_load(await _cat(ssh, lb, "/root/.kube/config") or "")
        assert installed["clusters"][0]["cluster"]["server"] == f"https://{lb.address}:8383"

        # ---- scale out: facts.yml, then scale.yml limited to the new node
        nodes["workernode-2"] = (w3, "worker")
        await ex.run(ansible.address, _inventory(nodes, lb.address))
        await ex.run(w3.address, AuthorizedKey(MARKER, key.public))
        await ex.run(ansible.address, _playbook(key, "facts.yml"))
        await ex.run(ansible.address, _playbook(key, "scale.yml", limit=["workernode-2"]))
        assert "joined workernode-2 to masternode-0" in (await _cat(ssh, w3, f"{MARKS}/scale.yml") or "")
        assert await _cat(ssh, w1, f"{MARKS}/scale.yml") is None  # --limit: only the new node

        # ---- upgrade (change_vnfpkg): after facts.yml, the control plane, then one worker per run;
        # the first control plane is reached by every run (the drain is delegated to it)
        up = [("kube_version", "1.31.2")]
        run = await ex.run(ansible.address, _playbook(key, "upgrade-cluster.yml", limit=["masternode-0"], extra=up))
        assert set(run.data["recap"]) == {"masternode-0"}
        assert await _cat(ssh, m, f"{MARKS}/upgrade-cluster.yml") == "upgraded masternode-0 to 1.31.2\n"
        assert await _cat(ssh, w1, f"{MARKS}/upgrade-cluster.yml") is None
        run = await ex.run(ansible.address, _playbook(key, "upgrade-cluster.yml", limit=["workernode-0"], extra=up))
        assert set(run.data["recap"]) == {"workernode-0"}
        assert (await _cat(ssh, m, f"{MARKS}/drained-nodes") or "").split() == ["masternode-0", "workernode-0"]
        assert await _cat(ssh, w1, f"{MARKS}/upgrade-cluster.yml") == "upgraded workernode-0 to 1.31.2\n"
        assert await _cat(ssh, w3, f"{MARKS}/upgrade-cluster.yml") is None
        # as strict as Kubespray's checks: kube_version without a "v" (v2.28 and later);
        # the step refuses such a value itself, so the stand-in is reached by forcing it
        bad = _playbook(key, "upgrade-cluster.yml", limit=["workernode-2"], extra=up)
        object.__setattr__(bad, "extra_vars", (("kube_version", "v1.31.2"),))
        with pytest.raises(StepFailed) as e:
            await ex.run(ansible.address, bad)
        assert "Stop if some versions have a 'v' left at the start" in e.value.reason
        # without kube_version: the release's default (Kubespray's kubespray_defaults), as a real tree
        await ex.run(ansible.address, _playbook(key, "upgrade-cluster.yml", limit=["workernode-2"]))
        assert await _cat(ssh, w3, f"{MARKS}/upgrade-cluster.yml") == "upgraded workernode-2 to 1.30.4\n"

        # ---- scale in: remove-node.yml answered non-interactively, the node leaves hosts.yaml. It
        # gathers the facts of every host: with the run key on the control plane and the removed
        # node only, the other workers are UNREACHABLE and nothing is removed
        removal = _playbook(key, "remove-node.yml", extra=[("node", "workernode-1"), ("skip_confirmation", "yes")])
        for h in (w1, w3):
            await ex.run(h.address, AuthorizedKey(MARKER, ""))
        with pytest.raises(StepFailed) as e:
            await ex.run(ansible.address, removal)
        assert "UNREACHABLE!" in e.value.reason and "Permission denied" in e.value.reason
        assert "failing task: TASK [Gather minimal facts]" in e.value.reason
        assert await _cat(ssh, w2, f"{MARKS}/reset") is None
        for h in (w1, w3):
            await ex.run(h.address, AuthorizedKey(MARKER, key.public))
        run = await ex.run(ansible.address, removal)
        assert set(run.data["recap"]) >= {"masternode-0", "workernode-0", "workernode-1", "workernode-2"}
        assert (await _cat(ssh, w2, f"{MARKS}/reset") or "").strip() == "reset workernode-1"
        assert "workernode-1" in (await _cat(ssh, m, f"{MARKS}/deleted-nodes") or "")
        assert (await ex.run(ansible.address, KubesprayRemoveHost(INV, OWNER, "workernode-1", w2.address))).changed
        hosts_yaml = yaml.safe_load(await _cat(ssh, ansible, f"{INV}/hosts.yaml") or "")
        assert list(hosts_yaml["all"]["children"]["kube_node"]["hosts"]) == ["workernode-0", "workernode-2"]
        assert w2.address not in (await _cat(ssh, ansible, f"{INV}/known_hosts") or "")

        # ---- the run key leaves the nodes
        for h in (m, w1, w3):
            await ex.run(h.address, AuthorizedKey(MARKER, ""))
            assert MARKER not in (await _cat(ssh, h, "/root/.ssh/authorized_keys") or "")

        # ---- terminate: exactly the inventory directory goes
        assert (await ex.run(ansible.address, KubesprayRemoveInventory(ROOT, INV, OWNER))).changed
        gone = await ssh.run(ansible.target(), f"test -e {INV}")
        assert not gone.ok
        assert (await _cat(ssh, ansible, "/root/.ssh/known_hosts")) == "operator.example ssh-ed25519 AAAAoperator\n"
        assert await _cat(ssh, ansible, f"{ROOT}/cluster.yml") is not None
        assert await _cat(ssh, ansible, f"{ROOT}/inventory/sample/group_vars/all/all.yml") is not None
    finally:
        await ex.close()


async def test_kubespray_standin_failures_pinned_keys_unreachable_node_confirmation(
        make_hosts, ssh: SshExecutor) -> None:
    ansible, m, w1, w2 = make_hosts(4)
    await _install_ansible_server(ssh, ansible)
    ex = _session([ansible, m, w1, w2])
    key = RunKey.generate()
    nodes = {"masternode-0": (m, "master"), "workernode-0": (w1, "worker"), "workernode-1": (w2, "worker")}
    try:
        await ex.run(ansible.address, _inventory(nodes, m.address))
        for h in (m, w1, w2):
            await ex.run(h.address, AuthorizedKey(MARKER, key.public))
        await ex.run(ansible.address, _playbook(key, "cluster.yml"))

        # another cluster's inventory path is refused, and nothing is written there
        with pytest.raises(StepFailed, match="another cluster"):
            await ex.run(ansible.address, KubesprayCheckInventory(ROOT, INV, "inst-other"))

        # a tree without its release's entry points (playbooks/facts.yml gone, the root wrappers
        # left) fits no known layout: refused naming the layouts, for the check and for a run
        broken = "/opt/kubespray-broken"
        assert (await ssh.run_script(ansible.target(), f"cp -a {ROOT} {broken}; rm {broken}/playbooks/facts.yml")).ok
        with pytest.raises(StepFailed) as e:
            await ex.run(ansible.address, KubesprayCheckInventory(broken, f"{broken}/inventory/c2", OWNER, claim=True))
        assert "fits none of the known release layouts" in e.value.reason
        assert "Kubespray v2.22 and later (playbooks/): playbooks/cluster.yml" in e.value.reason
        assert not (await ssh.run(ansible.target(), f"test -e {broken}/inventory/c2")).ok
        with pytest.raises(StepFailed, match="fits none of the known release layouts"):
            await ex.run(ansible.address, KubesprayPlaybook(broken, f"{broken}/inventory/mycluster", OWNER,
                                                            "facts.yml", private_key=key.private))

        # an inventory without the groups Kubespray needs fails the run, naming the check
        broken = await ssh.run_script(ansible.target(), f"sed -i '/calico_rr/d' {INV}/hosts.yaml")
        assert broken.ok
        with pytest.raises(StepFailed) as e:
            await ex.run(ansible.address, _playbook(key, "facts.yml"))
        assert "failing task: TASK [Stop if a group Kubespray targets is missing]" in e.value.reason
        assert PROXY_PW not in str(e.value)
        await ex.run(ansible.address, _inventory(nodes, m.address))  # rewritten whole: fixed

        # remove-node.yml without skip_confirmation fails at once (stdin is /dev/null), no hang
        with pytest.raises(StepFailed, match="confirmation"):
            await ex.run(ansible.address, _playbook(key, "remove-node.yml", extra=[("node", "workernode-1")]))

        # a node whose host key changed is refused by Ansible (pinned keys, despite ansible.cfg)
        w1.restart(new_host_key=True)
        with pytest.raises(StepFailed) as e:
            await ex.run(ansible.address, _playbook(key, "facts.yml"))
        assert "error: fatal: [workernode-0]: UNREACHABLE!" in e.value.reason
        assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in e.value.reason

        # a dead node: the graceful removal fails, the ungraceful one goes through
        w2.bed.stop_hosts([w2])
        removal = [("node", "workernode-1"), ("skip_confirmation", "yes")]
        with pytest.raises(StepFailed, match="UNREACHABLE"):
            await ex.run(ansible.address, _playbook(key, "remove-node.yml", extra=removal))
        await ex.run(ansible.address, _playbook(key, "remove-node.yml", extra=[
            *removal, ("reset_nodes", "false"), ("allow_ungraceful_removal", "true")]))
        assert "workernode-1" in (await _cat(ssh, m, f"{MARKS}/deleted-nodes") or "")
    finally:
        await ex.close()
