"""Declared parameter schemas (issue 21): a key no schema declares is refused at every level with
its path and the nearest known key; every value that reaches a host has a type that admits only
what is valid there, and what a type must admit (passwords, free text) is encoded where it lands.
Quick: schemas and renderers only, no engine."""

from __future__ import annotations

import copy
import json
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.adapters.mgmt.cnf_nodeport import params as C
from vnfm.adapters.mgmt.kubespray import params as K
from vnfm.adapters.mgmt.private_registry import params as R
from vnfm.adapters.nodes.ssh.base import script_text
from vnfm.domain.errors import BadRequest
from vnfm.domain.params import Declared, merge
from vnfm.domain.secrets import is_secret_key
from vnfm.entrypoints.cli.params_doc import SECTIONS, rows
from vnfm.nodesteps.kubeadm import PrepareNode
from vnfm.nodesteps.registry import ContainerdRegistries, RegistryAuthEntry
from vnfm.nodesteps.registry_vnf import InstallDocker

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "requests"
KEY = "k8s_cluster_installation_param"


def _example(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((EXAMPLES / name).read_text())["additionalParams"]
    return body


def kubeadm_sample() -> dict[str, Any]:
    """Every cluster key at once: the storage and registry samples merged, the proxy too."""
    p = _example("instantiate-storage-pv.json")
    k = p[KEY]
    k["private_registry_connection_info"] = _example("instantiate-private-registry.json")[KEY][
        "private_registry_connection_info"]
    k["proxy"] = _example("instantiate-single-master.json")[KEY]["proxy"]
    k["storage_server"]["cinder_volume_setup_params"][0]["device"] = "/dev/vdb"
    k["private_registry_connection_info"][0].update(username="user01", password="user01-password")
    return p


def kubespray_sample() -> dict[str, Any]:
    k = copy.deepcopy(_example("instantiate-single-master.json")[KEY])
    for drop in ("script_path", "private_registry_connection_info", "storage_server", "pv_registration_params"):
        k.pop(drop, None)
    k["master_node"].pop("cluster_cp_name", None)
    k["proxy"].pop("k8s_node_cidr", None)
    k["ansible"] = {"ip_address": "192.168.10.5", "username": "ubuntu", "password": "ubuntu", "mtu": 1450,
                    "kubespray_root_path": "/home/ubuntu/kubespray", "playbook_timeout": 600,
                    "transferring_inventory_path": "/home/ubuntu/kubespray/inventory/mycluster"}
    k["external_lb_param"] = {"ssh_cp_name": "externalLB_FloatingIP", "ssh_username": "ubuntu",
                              "ssh_password": "ubuntu", "script_path": "Scripts/install_external_lb.sh"}
    return {KEY: k}


def registry_sample() -> dict[str, Any]:
    return {R.ROOT: {"ssh_cp_name": "CP1", "ssh_username": "ubuntu", "ssh_password": "pw", "port_no": 5000,
                     "image_path": "Files/images/registry.tar", "cert_path": "Files/registry/cert.pem",
                     "key_path": "Files/registry/key.pem", "data_dir": "/var/lib/registry",
                     "volume_resource_id": "VirtualStorage",
                     "proxy": {"http_proxy": "http://proxy:3128", "https_proxy": "http://proxy:3128",
                               "no_proxy": "10.0.0.0/8"}}}


def cnf_sample() -> dict[str, Any]:
    return {C.KEY: {"script_path": "Scripts/configure_lb.sh",
                    "external_lb_param": {"ssh_ip": "192.168.10.20", "ssh_username": "ubuntu",
                                          "ssh_password": "ubuntu"}}}


MODELS: list[tuple[Declared[Any], Callable[[], dict[str, Any]]]] = [
    (P.DECLARED, kubeadm_sample), (K.DECLARED, kubespray_sample), (R.DECLARED, registry_sample),
    (C.DECLARED, cnf_sample),
]
IDS = [d.owner for d, _ in MODELS]


def _steps(path: str) -> list[str | int]:
    out: list[str | int] = []
    for part in path.split("."):
        out += [part[:-2], 0] if part.endswith("[]") else [part]
    return out


def _set(doc: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = _steps(path)
    node: Any = doc
    for s in parents:
        node = node[s] if isinstance(s, int) else node.setdefault(s, {})
    node[last] = value


def _refusal(d: Declared[Any], params: dict[str, Any]) -> str:
    with pytest.raises(BadRequest) as e:
        d.parse(params)
    return e.value.detail


@pytest.mark.parametrize(("d", "sample"), MODELS, ids=IDS)
def test_the_samples_parse(d: Declared[Any], sample: Callable[[], dict[str, Any]]) -> None:
    assert d.parse(sample()) is not None


@pytest.mark.parametrize(("d", "sample"), MODELS, ids=IDS)
def test_an_unknown_key_is_refused_at_every_level_naming_its_path(d: Declared[Any],
                                                                   sample: Callable[[], dict[str, Any]]) -> None:
    objects = [r.path for r in rows(d.model) if r.type in ("object", "list of objects")]
    assert objects
    for path in objects:
        params = sample()
        where = f"{path}[]" if any(r.path.startswith(f"{path}[].") for r in rows(d.model)) else path
        _set(params, f"{where}.no_such_key", "x")
        detail = _refusal(d, params)
        assert f"additionalParams.{where.replace('[]', '[0]')}.no_such_key: not a known key" in detail, detail


@pytest.mark.parametrize(("d", "sample", "typo", "hint"), [
    (P.DECLARED, kubeadm_sample, f"{KEY}.master_node.pod_cdir", "pod_cidr"),
    (P.DECLARED, kubeadm_sample, f"{KEY}.proxy.noproxy", "no_proxy"),
    (P.DECLARED, kubeadm_sample, f"{KEY}.private_registry_conection_info", "private_registry_connection_info"),
    (K.DECLARED, kubespray_sample, f"{KEY}.ansible.playbook_timout", "playbook_timeout"),
    (K.DECLARED, kubespray_sample, f"{KEY}.external_lb_param.ssh_port", None),
    (R.DECLARED, registry_sample, f"{R.ROOT}.port", "port_no"),
])
def test_the_issues_misspellings_are_refused_with_the_nearest_key(d: Declared[Any], sample: Callable[[], Any],
                                                                  typo: str, hint: str | None) -> None:
    params = sample()
    _set(params, typo, "x")
    detail = _refusal(d, params)
    assert detail.startswith(f"additionalParams.{typo}: not a known key"), detail
    if hint:
        assert f"did you mean '{hint}'" in detail


@pytest.mark.parametrize(("d", "sample"), MODELS, ids=IDS)
def test_every_key_refuses_a_value_of_the_wrong_type(d: Declared[Any], sample: Callable[[], Any]) -> None:
    for r in rows(d.model):
        params = sample()
        wrong: Any = {"x": 1} if r.type not in ("object", "object (free-form)") else 7
        _set(params, r.path, wrong)
        detail = _refusal(d, params)
        assert f"additionalParams.{r.path.replace('[]', '[0]')}" in detail, (r.path, detail)


HOSTILE = ["a;touch /tmp/pwned", "a\nExecStartPre=/bin/sh -c id", 'a"b', "a'b", "-x", "$(id)", "a b", "a`id`",
           "a\\b", "a%n", "../../etc"]
# keys whose type must admit such text: secrets (to the SSH login, environment variables or TOML strings,
# never interpolated) and names that stay in vnfm (the VIM's name, a registry user: a TOML string)
FREE_TEXT = {"password", "ssh_password", "vim_name", "username@private_registry_connection_info"}


@pytest.mark.parametrize(("d", "sample"), MODELS, ids=IDS)
def test_hostile_strings_are_refused_by_every_key_that_reaches_a_host(d: Declared[Any],
                                                                      sample: Callable[[], Any]) -> None:
    admitted: set[str] = set()
    for r in rows(d.model):
        if r.type in ("object", "list of objects", "object (free-form)", "boolean") or "number" in r.type \
                or "integer" in r.type or "port" in r.type.lower():
            continue
        for value in HOSTILE:
            params = sample()
            _set(params, r.path, value)
            try:
                d.parse(params)
            except BadRequest as e:
                assert f"additionalParams.{r.path.replace('[]', '[0]')}" in e.detail
                assert "secret" not in r.type or value not in e.detail  # secrets are never echoed
                continue
            leaf = r.path.rsplit(".", 1)[-1]
            admitted.add(f"{leaf}@private_registry_connection_info" if "private_registry_connection_info" in r.path
                         and leaf == "username" else leaf)
            assert "\n" not in value or "private key" in r.type, f"{r.path} admits a newline"
    assert admitted <= FREE_TEXT, admitted - FREE_TEXT


def test_secret_fields_are_the_ones_the_scrubber_knows() -> None:
    for d in SECTIONS.values():
        for r in rows(d.model):
            leaf = r.path.rsplit(".", 1)[-1]
            assert ("secret" in r.type) == (is_secret_key(leaf) or leaf in ("http_proxy", "https_proxy")), r.path


def test_system_directories_are_refused_as_paths() -> None:
    for path in ("/etc", "/etc/", "/", "/usr/lib/x", "/var", "/proc/1", "/root/.ssh", "/boot"):
        params = kubeadm_sample()
        params[KEY]["storage_server"]["cinder_volume_setup_params"][0]["mount_to"] = path
        assert "is a system directory" in _refusal(P.DECLARED, params)
    params = kubeadm_sample()
    params[KEY]["storage_server"]["cinder_volume_setup_params"][0]["mount_to"] = "/volume/data/"
    assert P.DECLARED.parse(params).cluster.storage_server.volumes[0].mount_to == "/volume/data"


def test_the_merge_rule_is_declared_once_per_driver() -> None:
    stored = kubespray_sample()
    partial = {KEY: {"worker_node": {"password": "new"}}}
    assert merge(stored, partial, 2)[KEY]["worker_node"] == {"password": "new"}  # Kubespray: whole dicts
    assert "worker_node.ssh_cp_name: is required" in _refusal(K.DECLARED, K.DECLARED.merged(stored, partial))
    stored = kubeadm_sample()  # kubeadm: one level deeper
    merged = P.DECLARED.for_operation("SCALE", stored, partial)
    assert merged.cluster.worker.password == "new" and merged.cluster.worker.ssh_cp_name == "workerNode_CP2"
    assert P.DECLARED.merge_depth == 3 and K.DECLARED.merge_depth == 2


def test_inert_keys_give_warnings() -> None:
    notes = P.DECLARED.notices(kubeadm_sample())
    assert notes == [f"additionalParams.{KEY}.script_path: accepted but not acted on: {P.SCRIPT_NOT_RUN}"]
    assert any("external_lb_param.script_path" in n for n in K.DECLARED.notices(kubespray_sample()))


def test_secrets_never_in_a_repr() -> None:
    params = kubeadm_sample()
    params[KEY]["proxy"]["http_proxy"] = "http://user:s3cr3t-pw@proxy:3128"
    text = repr(P.DECLARED.parse(params))
    assert "s3cr3t" not in text and "user01-password" not in text and "***" in text


# ============================================================================= where values land
def _proxy_block(tmp: Path) -> str:
    """prepare_node.sh's proxy block, writing under `tmp` instead of /etc."""
    text = script_text("prepare_node")
    start = text.index('if [ -n "$HTTP_PROXY_URL$HTTPS_PROXY_URL" ]; then')
    end = text.index("\nfi\n", start) + 4
    return "set -euo pipefail\n" + text[start:end].replace("/etc/", f"{tmp}/etc/") + "\n"


@pytest.mark.parametrize("url", ["http://proxy.example:3128", "http://us%40er:p%25w%3B@proxy:3128/",
                                 "https://[fd00::1]:3128"])
def test_the_containerd_drop_in_and_apt_conf_hold_exactly_the_proxy(tmp_path: Path, url: str) -> None:
    step = PrepareNode("node-1", "1.30.4", url, url, "10.0.0.0/8,.svc")
    (tmp_path / "etc/apt/apt.conf.d").mkdir(parents=True)
    env = {"HTTP_PROXY_URL": step.http_proxy or "", "HTTPS_PROXY_URL": step.https_proxy or "",
           "NO_PROXY_LIST": step.no_proxy, "PATH": "/usr/bin:/bin"}
    subprocess.run(["bash", "-c", _proxy_block(tmp_path)], env=env, check=True, timeout=10)
    dropin = (tmp_path / "etc/systemd/system/containerd.service.d/http-proxy.conf").read_text().splitlines()
    escaped = url.replace("%", "%%")  # systemd's specifiers
    assert dropin == ["[Service]", f'Environment="HTTP_PROXY={escaped}" "HTTPS_PROXY={escaped}" '
                                   '"NO_PROXY=10.0.0.0/8,.svc"']
    apt = (tmp_path / "etc/apt/apt.conf.d/95vnfm-proxy").read_text().splitlines()
    assert apt == [f'Acquire::http::Proxy "{url}";', f'Acquire::https::Proxy "{url}";']


@pytest.mark.parametrize("value", [v for v in HOSTILE if v != "a%n"] + ["http://a\nExecStartPre=/bin/sh",
                                                                         'http://p:3128" "X=1', "http://p;id"])
def test_node_steps_refuse_a_proxy_that_bypassed_the_schema(value: str) -> None:
    """The steps check their own fields, so the twin and SSH refuse alike."""
    for make in (lambda: PrepareNode("node-1", "1.30.4", value), lambda: InstallDocker(value),
                 lambda: PrepareNode("node-1", "1.30.4", None, None, value)):
        with pytest.raises(ValueError):
            make()


@pytest.mark.parametrize("value", HOSTILE)
def test_registry_credentials_are_toml_strings(value: str) -> None:
    if "\n" in value:
        with pytest.raises(ValueError, match="single lines"):
            ContainerdRegistries((RegistryAuthEntry("10.0.0.9:5000", value, value),))
        return
    step = ContainerdRegistries((RegistryAuthEntry("10.0.0.9:5000", value, value),))
    doc = tomllib.loads(step.auth_block("io.containerd.grpc.v1.cri"))
    auth = doc["plugins"]["io.containerd.grpc.v1.cri"]["registry"]["configs"]["10.0.0.9:5000"]["auth"]
    assert auth == {"username": value, "password": value}
