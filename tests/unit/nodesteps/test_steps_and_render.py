"""Step validation and rendering (pure)."""

from __future__ import annotations

import tomllib

import pytest
import yaml

from vnfm.adapters.nodes.ssh.render import (
    manifest_yaml,
    render_containerd_hosts_toml,
    render_ganesha_conf,
    render_haproxy_cfg,
    render_nfs_pv_manifest,
    render_registry_config,
)
from vnfm.nodesteps import (
    Backend,
    EtcdMemberAdd,
    EtcdStart,
    HaproxySetBackends,
    NfsExport,
    RegistryClientConfig,
    RegistryServe,
    SetHostsEntries,
)


def test_haproxy_config_lists_backends() -> None:
    step = HaproxySetBackends((("m1", "10.0.0.1", 6443), Backend("m2", "10.0.0.2", 6443)), frontend_port=6443)
    cfg = render_haproxy_cfg(step)
    assert "  master-worker\n" in cfg and "bind :6443" in cfg
    assert "server m1 10.0.0.1:6443 check" in cfg and "server m2 10.0.0.2:6443 check" in cfg
    assert "expose-fd listeners" in cfg


@pytest.mark.parametrize(
    "backends",
    [
        (("m1", "10.0.0.1\n  server evil 6.6.6.6", 6443),),
        (("m 1", "10.0.0.1", 6443),),
        (("m1", "10.0.0.1", 70000),),
        (("m1", "10.0.0.1", 6443), ("m1", "10.0.0.2", 6443)),
    ],
)
def test_haproxy_rejects_bad_backends(backends: tuple) -> None:
    with pytest.raises(ValueError):
        HaproxySetBackends(backends)


def test_etcd_steps_validate() -> None:
    EtcdStart("m1", "http://10.0.0.1:2380", "http://10.0.0.1:2379", (("m1", "http://10.0.0.1:2380"),))
    with pytest.raises(ValueError):
        EtcdStart("m1", "http://10.0.0.1:2380", "http://10.0.0.1:2379", (("m2", "http://10.0.0.2:2380"),))
    with pytest.raises(ValueError):
        EtcdMemberAdd(name="m4", peer_url="http://10.0.0.4:2380; rm -rf /")
    with pytest.raises(ValueError):
        EtcdMemberAdd(name="", peer_url="http://10.0.0.4:2380")


def test_ganesha_conf() -> None:
    step = NfsExport("/srv/nfs/vol1", clients=("10.0.0.0/24", "10.1.0.5"), bind_addr="10.0.0.9")
    conf = render_ganesha_conf(step)
    assert "Path = /srv/nfs/vol1;" in conf and "Pseudo = /srv/nfs/vol1;" in conf
    assert "Clients = 10.0.0.0/24, 10.1.0.5;" in conf and "Bind_addr = 10.0.0.9;" in conf
    assert "Name = VFS;" in conf and "Squash = No_Root_Squash;" in conf
    with pytest.raises(ValueError):
        NfsExport("/srv/x; }", clients=("*",))
    with pytest.raises(ValueError):
        NfsExport("/srv/x", clients=())


def test_pv_manifest() -> None:
    pv = render_nfs_pv_manifest("vol1", server="10.0.0.9", path="/srv/nfs/vol1", capacity="5Gi")
    assert pv["spec"]["nfs"] == {"server": "10.0.0.9", "path": "/srv/nfs/vol1"}
    assert pv["spec"]["capacity"] == {"storage": "5Gi"}
    assert yaml.safe_load(manifest_yaml(pv)) == pv
    with pytest.raises(ValueError):
        render_nfs_pv_manifest("v", server="s", path="relative")


def test_registry_renders() -> None:
    serve = RegistryServe(port=5443, tls_cert_pem="CERT", tls_key_pem="KEY")
    cfg = yaml.safe_load(render_registry_config(serve))
    assert cfg["http"] == {"addr": ":5443", "tls": {"certificate": "/etc/docker/registry/tls.crt",
                                                    "key": "/etc/docker/registry/tls.key"}}
    assert "KEY" not in repr(serve)
    with pytest.raises(ValueError):
        RegistryServe(tls_cert_pem="CERT")
    client = RegistryClientConfig("reg.example:5443", ca_pem="-----BEGIN CERTIFICATE-----\nx\n")
    toml = tomllib.loads(render_containerd_hosts_toml(client))
    assert toml["server"] == "https://reg.example:5443"
    assert toml["host"]["https://reg.example:5443"]["ca"] == "/etc/containerd/certs.d/reg.example:5443/ca.crt"
    with pytest.raises(ValueError):
        RegistryClientConfig("reg.example")  # no port
    with pytest.raises(ValueError):
        RegistryClientConfig("reg.example:5000", plain_http=True, ca_pem="-----BEGIN CERTIFICATE-----")


def test_hosts_entries_validate() -> None:
    s = SetHostsEntries((("10.0.0.1", "single"),))
    assert s.entries == (("10.0.0.1", ("single",)),)
    with pytest.raises(ValueError):
        SetHostsEntries((("10.0.0.1", ("bad name",)),))
    with pytest.raises(ValueError):
        SetHostsEntries((("not-an-ip", ("x",)),))
