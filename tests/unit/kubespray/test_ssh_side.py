"""The Kubespray family over SSH without a network: hosts.yaml rendered and edited as YAML, the
inventory and authorized_keys scripts run locally on temp directories, and what the playbook
handler sends (secrets as exported variables only, never in argv or a file)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from vnfm.adapters.mgmt.kubespray.site import RunKey
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.nodes.ssh.base import parse_output, script_text
from vnfm.adapters.nodes.ssh.kubespray import (
    _b64,
    _inventory_inputs,
    remove_host,
    render_hosts,
    render_known_hosts,
    render_vars,
)
from vnfm.adapters.remote.ssh import Result, SshTarget, script_payload
from vnfm.nodesteps.kubespray import InventoryHost, KubesprayInventory, KubesprayPlaybook
from vnfm.nodesteps.kubespray_tree import LAYOUTS, find_layout, layout_lines

LAYOUT = "Kubespray v2.22 and later (playbooks/)"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0Kz0cE5h8Xr7oVqG0Q0v0m8l1ZyYtq8B4k8m7x9aB"


def _step(tmp: Path, hosts: tuple[InventoryHost, ...] | None = None) -> KubesprayInventory:
    hosts = hosts or (InventoryHost("masternode-0", "172.24.0.11", "10.10.0.11", "ubuntu", "master",
                                    "VNFM_BECOME_PASSWORD_MASTER"),
                      InventoryHost("worker1", "172.24.0.12", "10.10.0.12", "ubuntu", "worker"),
                      InventoryHost("worker12", "172.24.0.13", "10.10.0.13", "ubuntu", "worker"))
    return KubesprayInventory(str(tmp / "kubespray"), str(tmp / "kubespray/inventory/mycluster"), "inst-1",
                              hosts, (("172.24.0.11", KEY), ("172.24.0.12", KEY), ("172.24.0.13", KEY)),
                              "192.168.0.0/16", "10.199.187.0/24", ssl_addresses=("172.24.0.10", "10.10.0.10"),
                              mtu=1400, https_proxy_env="VNFM_HTTPS_PROXY", no_proxy="10.0.0.0/8")


def test_hosts_yaml_has_the_groups_kubespray_targets(tmp_path: Path) -> None:
    doc = yaml.safe_load(render_hosts(_step(tmp_path)))["all"]
    assert doc["hosts"]["masternode-0"] == {
        "ansible_host": "172.24.0.11", "ip": "10.10.0.11", "access_ip": "10.10.0.11", "ansible_user": "ubuntu",
        "ansible_become_password": "{{ lookup('env', 'VNFM_BECOME_PASSWORD_MASTER') }}"}
    ch = doc["children"]
    assert list(ch["kube_control_plane"]["hosts"]) == ["masternode-0"] == list(ch["etcd"]["hosts"])
    assert list(ch["kube_node"]["hosts"]) == ["worker1", "worker12"]
    assert ch["calico_rr"]["hosts"] == {}
    assert set(ch["k8s_cluster"]["children"]) == {"kube_control_plane", "kube_node", "calico_rr"}
    v = yaml.safe_load(render_vars(_step(tmp_path)))
    assert v["supplementary_addresses_in_ssl_keys"] == ["172.24.0.10", "10.10.0.10"]
    assert v["https_proxy"] == "{{ lookup('env', 'VNFM_HTTPS_PROXY') }}" and "http_proxy" not in v
    assert v["kube_pods_subnet"] == "192.168.0.0/16" and v["calico_mtu"] == 1400


def test_removing_a_host_edits_yaml_with_exact_names(tmp_path: Path) -> None:
    step = _step(tmp_path)
    hosts, known, changed = remove_host(render_hosts(step), render_known_hosts(step.known_hosts), "worker1",
                                        "172.24.0.12")
    assert changed
    doc = yaml.safe_load(hosts)["all"]
    assert list(doc["hosts"]) == ["masternode-0", "worker12"]
    assert list(doc["children"]["kube_node"]["hosts"]) == ["worker12"]
    assert [line.split()[0] for line in known.splitlines()] == ["172.24.0.11", "172.24.0.13"]
    again = remove_host(hosts, known, "worker1", "172.24.0.12")
    assert again[2] is False


def _run(name: str, inputs: dict[str, str], home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", **({"HOME": str(home)} if home else {})}
    return subprocess.run(["bash", "-s"], input=script_payload(script_text(name), None, inputs),
                          capture_output=True, text=True, timeout=10, env=env)


# the entry points of real release trees (their inventory/sample aside), as in the real trees
TREES = {
    "v2.16": ("cluster.yml", "scale.yml", "remove-node.yml", "facts.yml", "upgrade-cluster.yml"),
    "v2.23": ("cluster.yml", "scale.yml", "remove-node.yml", "upgrade-cluster.yml", "playbooks/cluster.yml",
              "playbooks/scale.yml", "playbooks/remove_node.yml", "playbooks/facts.yml",
              "playbooks/upgrade_cluster.yml"),
    # a v2.23 tree whose playbooks/ went missing: root wrappers only, no facts.yml anywhere
    "broken": ("cluster.yml", "scale.yml", "remove-node.yml", "upgrade-cluster.yml"),
}


def _tree(tmp: Path, release: str = "v2.23", name: str = "kubespray") -> Path:
    root = tmp / name
    (root / "inventory/sample/group_vars/all").mkdir(parents=True)
    (root / "inventory/sample/group_vars/all/all.yml").write_text("---\n")
    for f in TREES[release]:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("---\n")
    return root


@pytest.mark.parametrize(("release", "layout"), [("v2.23", "Kubespray v2.22 and later (playbooks/)"),
                                                 ("v2.16", "Kubespray v2.16 to v2.21 (playbooks at the root)")])
def test_the_inventory_script_finds_the_release_layout(tmp_path: Path, release: str, layout: str) -> None:
    root = _tree(tmp_path, release)
    r = _run("kubespray_inventory", _inventory_inputs("check", str(root), str(root / "inventory/c1"), "inst-1"))
    assert r.returncode == 0, r.stderr
    assert parse_output(r.stdout)["layout"] == layout


def test_a_tree_of_no_known_layout_is_refused_naming_the_layouts(tmp_path: Path) -> None:
    root = _tree(tmp_path, "broken")
    r = _run("kubespray_inventory", _inventory_inputs("claim", str(root), str(root / "inventory/c1"), "inst-1"))
    assert r.returncode == 3 and not (root / "inventory/c1").exists()
    assert f"no Kubespray tree at {root}: it fits none of the known release layouts" in r.stderr
    assert ("Kubespray v2.22 and later (playbooks/): playbooks/cluster.yml, playbooks/scale.yml, "
            "playbooks/remove_node.yml, playbooks/facts.yml, inventory/sample") in r.stderr
    assert "Kubespray v2.16 to v2.21 (playbooks at the root): cluster.yml, scale.yml, remove-node.yml" in r.stderr


def test_inventory_script_owns_its_directory_and_refuses_another_clusters(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    step = _step(tmp_path)
    inv = Path(step.inventory_path)
    write = {**_inventory_inputs("write", str(root), str(inv), "inst-1"), "HOSTS_B64": _b64(render_hosts(step)),
             "KNOWN_B64": _b64(render_known_hosts(step.known_hosts)), "VARS_B64": _b64(render_vars(step))}
    r = _run("kubespray_inventory", write)
    assert r.returncode == 0, r.stderr
    assert parse_output(r.stdout) == {"changed": "true", "created": "true", "layout": LAYOUT}
    assert (inv / "group_vars/all/all.yml").is_file() and (inv / ".vnfm-owner").read_text() == "inst-1"
    assert (inv / "hosts.yaml").read_text() == render_hosts(step)
    assert oct((inv / "hosts.yaml").stat().st_mode & 0o777) == "0o600"
    assert parse_output(_run("kubespray_inventory", write).stdout) == {"changed": "false", "created": "false",
                                                                        "layout": LAYOUT}
    # another cluster: refused on check, claim, write and delete; its files stay
    for mode in ("check", "claim", "write", "delete"):
        other = {**write, **_inventory_inputs(mode, str(root), str(inv), "inst-2")}
        r = _run("kubespray_inventory", other)
        assert r.returncode == 3 and "another cluster (inst-1)" in r.stderr, (mode, r.stderr)
    assert (inv / "hosts.yaml").is_file()
    # an unmarked inventory (made by hand) is not taken over
    hand = root / "inventory/byhand"
    hand.mkdir()
    (hand / "hosts.yaml").write_text("all: {}\n")
    r = _run("kubespray_inventory", _inventory_inputs("check", str(root), str(hand), "inst-1"))
    assert r.returncode == 3 and "not this cluster's" in r.stderr
    # no Kubespray tree
    r = _run("kubespray_inventory", _inventory_inputs("check", str(tmp_path / "nowhere"), str(inv), "inst-1"))
    assert r.returncode == 3 and "no Kubespray tree" in r.stderr
    # claim takes a free path at once (the sample, the mark; no hosts yet); a second claim is a no-op
    claimed = root / "inventory/claimed"
    r = _run("kubespray_inventory", _inventory_inputs("claim", str(root), str(claimed), "inst-3"))
    assert parse_output(r.stdout) == {"changed": "true", "created": "true", "layout": LAYOUT}
    assert (claimed / ".vnfm-owner").read_text() == "inst-3" and not (claimed / "hosts.yaml").exists()
    r = _run("kubespray_inventory", _inventory_inputs("claim", str(root), str(claimed), "inst-3"))
    assert parse_output(r.stdout) == {"changed": "false", "created": "false", "layout": LAYOUT}
    # delete removes exactly the directory
    r = _run("kubespray_inventory", _inventory_inputs("delete", str(root), str(inv), "inst-1"))
    assert parse_output(r.stdout)["changed"] == "true" and not inv.exists()
    assert (root / "inventory/sample").is_dir() and (root / "cluster.yml").is_file() and hand.is_dir()
    r = _run("kubespray_inventory", _inventory_inputs("delete", str(root), str(inv), "inst-1"))
    assert parse_output(r.stdout)["changed"] == "false"


def test_authorized_key_script_owns_one_marked_line(tmp_path: Path) -> None:
    (tmp_path / ".ssh").mkdir()
    ak = tmp_path / ".ssh/authorized_keys"
    ak.write_text(f"{KEY} operator@laptop\n")
    inputs = {"MARKER": "vnfm-kubespray-inst-1", "PUBLIC_KEY": KEY}
    assert parse_output(_run("authorized_key", inputs, tmp_path).stdout)["changed"] == "true"
    assert ak.read_text() == f"{KEY} operator@laptop\n{KEY} vnfm-kubespray-inst-1\n"
    assert parse_output(_run("authorized_key", inputs, tmp_path).stdout)["changed"] == "false"
    inputs["PUBLIC_KEY"] = ""
    assert parse_output(_run("authorized_key", inputs, tmp_path).stdout)["changed"] == "true"
    assert ak.read_text() == f"{KEY} operator@laptop\n"


class RecordingSsh:
    def __init__(self, result: Result) -> None:
        self.calls: list[dict[str, Any]] = []
        self.result = result

    async def run_script(self, target: SshTarget, script_text: str, **kw: Any) -> Result:
        self.calls.append({"target": target, "script": script_text, **kw})
        return self.result

    async def close(self) -> None:
        pass


PRIVATE = "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-run-key\n-----END OPENSSH PRIVATE KEY-----\n"


def _playbook(tmp: Path) -> KubesprayPlaybook:
    return KubesprayPlaybook(str(tmp / "ks"), str(tmp / "ks/inventory/c1"), "inst-1", "remove-node.yml",
                             extra_vars=(("node", "worker1"), ("skip_confirmation", "yes")), become=True,
                             private_key=PRIVATE, env=(("VNFM_HTTPS_PROXY", "https://u:pw-in-url@proxy:3128"),))


async def test_playbook_secrets_travel_as_exported_variables_only(tmp_path: Path) -> None:
    ssh = RecordingSsh(Result(0, "@@ changed=true\n@@ seconds=7\n@@ recap=worker1:3:1:0:0 masternode-0:5:0:0:0 \n",
                              ""))
    ex = SshStepExecutor(ssh, {"10.10.0.50": SshTarget("10.10.0.50", username="ubuntu", password="ansible-pw")})
    step = _playbook(tmp_path)
    assert "secret-run-key" not in repr(step) and "pw-in-url" not in repr(step)
    res = await ex.run("10.10.0.50", step)
    assert res.data == {"seconds": 7.0, "recap": {"worker1": {"ok": 3, "changed": 1, "unreachable": 0, "failed": 0},
                                                  "masternode-0": {"ok": 5, "changed": 0, "unreachable": 0,
                                                                   "failed": 0}}, "path": ""}
    call = ssh.calls[0]
    assert call["env_secrets"] == {"VNFM_RUN_KEY": PRIVATE, "VNFM_HTTPS_PROXY": "https://u:pw-in-url@proxy:3128"}
    assert call["stdin_vars"]["EXTRA_VARS"] == "node=worker1\nskip_confirmation=yes"
    assert call["stdin_vars"]["BECOME"] == "yes"
    assert call["stdin_vars"]["LAYOUTS"].splitlines()[0].split("|")[:2] == [LAYOUT, "playbooks/remove_node.yml"]
    assert "secret-run-key" not in str(call["stdin_vars"]) and "pw-in-url" not in str(call["stdin_vars"])
    assert not call.get("args")


async def test_a_failed_playbook_reports_the_task_and_output_scrubbed(tmp_path: Path) -> None:
    stderr = ("fatal: [worker1]: FAILED! => proxy https://u:pw-in-url@proxy:3128 refused\n"
              "failing task: TASK [kubernetes/preinstall : Stop if swap enabled] ****\n")
    ex = SshStepExecutor(RecordingSsh(Result(1, "", stderr)),
                         {"10.10.0.50": SshTarget("10.10.0.50", username="ubuntu", password="x")})
    with pytest.raises(Exception) as e:
        await ex.run("10.10.0.50", _playbook(tmp_path))
    text = str(e.value)
    assert "TASK [kubernetes/preinstall : Stop if swap enabled]" in text and "refused" in text
    assert "pw-in-url" not in text


FAKE_ANSIBLE = """#!/bin/bash
# records how it was called; prints a recap like ansible-playbook
printf '%s\\n' "$PWD" "$@" > "$HOME/called"
printf 'PLAY RECAP ***\\nmasternode-0 : ok=3 changed=1 unreachable=0 failed=0 skipped=0\\n'
"""


@pytest.mark.parametrize(("release", "path"), [("v2.23", "playbooks/remove_node.yml"), ("v2.16", "remove-node.yml"),
                                               ("broken", None)])
def test_the_playbook_script_runs_the_playbook_where_the_release_keeps_it(tmp_path: Path, release: str,
                                                                            path: str | None) -> None:
    root = _tree(tmp_path, release)
    inv = root / "inventory/c1"
    inv.mkdir()
    (inv / ".vnfm-owner").write_text("inst-1")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "ansible-playbook").write_text(FAKE_ANSIBLE)
    (bin_ / "ansible-playbook").chmod(0o755)
    step = KubesprayPlaybook(str(root), str(inv), "inst-1", "remove-node.yml", extra_vars=(("node", "w1"),),
                             private_key=RunKey.generate().private)
    inputs = {"ROOT": str(root), "INV": str(inv), "OWNER": "inst-1", "OWNER_FILE": ".vnfm-owner",
              "HOSTS_FILE": "hosts.yaml", "KNOWN_HOSTS": "known_hosts", "VARS_FILE": "vnfm-vars.yml",
              "PLAYBOOK": step.playbook, "LAYOUTS": layout_lines(step.playbook), "LIMIT": "", "BECOME": "no",
              "EXTRA_VARS": "node=w1", "TIMEOUT_S": "30"}
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path)}
    r = subprocess.run(["bash", "-s"], input=script_payload(script_text("kubespray_playbook"),
                                                             {"VNFM_RUN_KEY": step.private_key}, inputs),
                       capture_output=True, text=True, timeout=30, env=env)
    if path is None:
        assert r.returncode == 3 and "fits none of the known release layouts" in r.stderr
        assert not (tmp_path / "called").exists()
        return
    assert r.returncode == 0, r.stderr
    out = parse_output(r.stdout)
    assert out["path"] == path and out["recap"].split() == ["masternode-0:3:1:0:0"]
    called = (tmp_path / "called").read_text().splitlines()
    assert called[0] == str(root) and called[-1] == path
    assert called[1:-1] == ["-i", f"{inv}/hosts.yaml", "-e", f"@{inv}/vnfm-vars.yml", "-e", "node=w1"]


def test_the_standin_tree_has_the_current_layout_and_no_root_facts() -> None:
    """CI's stand-in follows the current release layout, so a driver that looks for a root
    facts.yml (the bug of issue 22) fails on it as on a real tree."""
    tree = Path(__file__).resolve().parents[2] / "fixtures" / "kubespray_standin"
    layout = find_layout(lambda p: (tree / p).exists())
    assert layout is LAYOUTS[0] and not (tree / "facts.yml").exists()
    r = _run("kubespray_inventory", _inventory_inputs("check", str(tree), "/nonexistent/inv", "inst-1"))
    assert r.returncode == 0 and parse_output(r.stdout)["layout"] == LAYOUT, r.stderr
