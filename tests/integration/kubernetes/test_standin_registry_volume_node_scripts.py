"""Seed 003 (private registry connection on a node) and seed 001 (storage server volume, NFS exports)
node scripts over real SSH on test hosts. RECORDING STAND-INS replace systemctl (standins.py) and,
for the volume, blkid / mkfs / findmnt / mount (below): this is NOT containerd, NOT a block device.
The files the scripts write (containerd config, hosts.toml, CA, /etc/hosts, /etc/fstab) and
nfs-ganesha are real."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import require
from tests.integration.kubernetes import standins
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.examples import example_package_dir
from vnfm.nodesteps import (
    ContainerdRegistries,
    NfsExport,
    NfsExports,
    NodeRegistryConfig,
    PrepareVolume,
    RegistryAuthEntry,
)

pytestmark = pytest.mark.integration

REG_PW = "reg-s3cret-pw"
CONTAINERD_DEFAULT = """version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ""

      [plugins."io.containerd.grpc.v1.cri".registry.configs]
"""

VOLUME_STANDINS = {
    "blkid": r"""#!/bin/bash
# recording stand-in for blkid (NOT the real program): the "file system" is a marker file
. /usr/local/lib/vnfm-standin/common.sh
record blkid "$@"
fs=/var/lib/vnfm-standin/fs
[ -f "$fs" ] || exit 2
case "$*" in
  *"-s TYPE"*) cut -d' ' -f1 "$fs" ;;
  *"-s UUID"*) cut -d' ' -f2 "$fs" ;;
  *) exit 2 ;;
esac
""",
    "mkfs": r"""#!/bin/bash
# recording stand-in for mkfs (NOT the real program)
. /usr/local/lib/vnfm-standin/common.sh
record mkfs "$@"
printf '%s %s\n' "$2" "$(cat /proc/sys/kernel/random/uuid)" > /var/lib/vnfm-standin/fs
""",
    "findmnt": r"""#!/bin/bash
# recording stand-in for findmnt (NOT the real program)
. /usr/local/lib/vnfm-standin/common.sh
record findmnt "$@"
m=/var/lib/vnfm-standin/mounted${*: -1}/source
[ -f "$m" ] && cat "$m"
exit 0
""",
    "mount": r"""#!/bin/bash
# recording stand-in for mount (NOT the real program)
. /usr/local/lib/vnfm-standin/common.sh
record mount "$@"
mkdir -p "/var/lib/vnfm-standin/mounted${*: -1}"
printf '%s\n' "${*: -2:1}" > "/var/lib/vnfm-standin/mounted${*: -1}/source"
""",
}


async def test_standin_registry_connection_on_a_node_is_written_once_and_idempotent(make_hosts,
                                                                                     ssh: SshExecutor) -> None:
    node, = make_hosts(1)
    t = node.target()
    await ssh.put_file(t, "/usr/local/lib/vnfm-standin/common.sh", standins.COMMON, mode=0o644)
    await ssh.put_file(t, "/usr/local/sbin/systemctl", standins.SYSTEMCTL, mode=0o755)
    await ssh.put_file(t, "/etc/containerd/config.toml", CONTAINERD_DEFAULT, mode=0o644)
    ex = SshStepExecutor(ssh, {node.address: t}, timeout=60)
    ca = (example_package_dir() / "Files/registries/ca.crt").read_text()
    steps = [
        ContainerdRegistries((RegistryAuthEntry("registry.example.com", "user01", REG_PW),)),
        NodeRegistryConfig("192.168.0.10:5000", plain_http=True),
        NodeRegistryConfig("registry.example.com", ca_pem=ca, hosts_entry=("192.168.0.20", "registry.example.com")),
    ]
    assert [(await ex.run(node.address, s)).changed for s in steps] == [True, True, True]
    assert [(await ex.run(node.address, s)).changed for s in steps] == [False, False, False]

    certs = "/etc/containerd/certs.d"
    toml = (await ssh.get_file(t, f"{certs}/registry.example.com/hosts.toml")).decode()
    assert 'server = "https://registry.example.com"' in toml
    assert f'ca = "{certs}/registry.example.com/ca.crt"' in toml
    assert (await ssh.get_file(t, f"{certs}/registry.example.com/ca.crt")).decode().strip() == ca.strip()
    http = (await ssh.get_file(t, f"{certs}/192.168.0.10:5000/hosts.toml")).decode()
    assert 'server = "http://192.168.0.10:5000"' in http
    hosts = (await ssh.get_file(t, "/etc/hosts")).decode()
    assert "192.168.0.20 registry.example.com" in hosts
    config = (await ssh.get_file(t, "/etc/containerd/config.toml")).decode()
    assert f'config_path = "{certs}"' in config and 'config_path = ""' not in config
    assert '[plugins."io.containerd.grpc.v1.cri".registry.configs."registry.example.com".auth]' in config
    assert config.count("BEGIN vnfm-registry-auth") == 1
    mode = await ssh.run(t, ["stat", "-c", "%a", "/etc/containerd/config.toml"], check=True)
    assert mode.stdout.strip() == "600"  # it holds a registry password
    # containerd was restarted exactly once; the password was never on a command line
    calls = await standins.argv_log(ssh, node)
    assert [c for c in calls if c.startswith("systemctl restart")] == ["systemctl restart containerd"]
    assert not any(REG_PW in c for c in calls)

    # dropping the credentials removes the block and makes the file world-readable again
    assert (await ex.run(node.address, ContainerdRegistries(()))).changed
    config = (await ssh.get_file(t, "/etc/containerd/config.toml")).decode()
    assert REG_PW not in config and f'config_path = "{certs}"' in config


async def test_standin_storage_volume_formatted_once_mounted_in_fstab_and_remounted(make_hosts,
                                                                                    ssh: SshExecutor) -> None:
    server, = make_hosts(1)
    t = server.target()
    await ssh.put_file(t, "/usr/local/lib/vnfm-standin/common.sh", standins.COMMON, mode=0o644)
    for name, text in VOLUME_STANDINS.items():
        await ssh.put_file(t, f"/usr/local/sbin/{name}", text, mode=0o755)
    await ssh.run(t, "mkdir -p /var/lib/vnfm-standin && touch /var/lib/vnfm-standin/disk", check=True)  # "device"
    ex = SshStepExecutor(ssh, {server.address: t}, timeout=60)
    step = PrepareVolume("0e4f3b8a-5c2d-4d7e-9f10-2b3c4d5e6f70", "/volume", device="/var/lib/vnfm-standin/disk")
    first = await ex.run(server.address, step)
    assert first.changed and first.data["formatted"]
    again = await ex.run(server.address, step)
    assert not again.changed and not again.data["formatted"]
    calls = await standins.argv_log(ssh, server)
    assert [c for c in calls if c.split()[0] in ("mkfs", "mount")] == [
        "mkfs -t ext4 /var/lib/vnfm-standin/disk", "mount -t ext4 /var/lib/vnfm-standin/disk /volume"]
    fstab = (await ssh.get_file(t, "/etc/fstab")).decode()
    uuid = (await ssh.get_file(t, "/var/lib/vnfm-standin/fs")).decode().split()[1]
    assert [ln for ln in fstab.splitlines() if " /volume " in ln] == [f"UUID={uuid} /volume ext4 defaults,nofail 0 2"]

    # the server is replaced (heal) with the kept volume: mounted again, never formatted again
    await ssh.run(t, "rm -rf /var/lib/vnfm-standin/mounted", check=True)
    back = await ex.run(server.address, step)
    assert back.changed and not back.data["formatted"]
    calls = await standins.argv_log(ssh, server)
    assert sum(c.startswith("mkfs ") for c in calls) == 1 and sum(c.startswith("mount ") for c in calls) == 2
    assert (await ssh.get_file(t, "/etc/fstab")).decode() == fstab


async def test_several_nfs_exports_served_together_by_ganesha(make_hosts, ssh: SshExecutor) -> None:
    require("ganesha.nfsd", "nfs-ls")
    if not list(Path("/usr/lib").glob("*/ganesha/libfsalvfs.so")):
        pytest.skip("nfs-ganesha's VFS module is not installed (package nfs-ganesha-vfs)")
    server, client = make_hosts(2)
    await ssh.run(server.target(), "mkdir -p /volume && mount -t tmpfs -o size=16m tmpfs /volume", check=True)
    ex = SshStepExecutor(ssh, {server.address: server.target()}, timeout=60)
    step = NfsExports(tuple(NfsExport(f"/volume/nfs/pv{i}", (f"{client.address}/32",), export_id=i,
                                      bind_addr=server.address) for i in (1, 2, 3)))
    assert (await ex.run(server.address, step)).changed
    assert not (await ex.run(server.address, step)).changed
    for i in (1, 2, 3):
        await ssh.put_file(server.target(), f"/volume/nfs/pv{i}/hello-{i}.txt", "hi\n", mode=0o644)
        ls = await ssh.run(client.target(), ["nfs-ls", f"nfs://{server.address}/volume/nfs/pv{i}?version=4"],
                           timeout=30)
        assert ls.ok and f"hello-{i}.txt" in ls.stdout, ls.stderr
