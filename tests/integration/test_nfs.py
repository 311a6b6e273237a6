"""NFS export steps with nfs-ganesha (userspace), read back through libnfs (this kernel has no
NFS client), and the PersistentVolume manifest that points at the export."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import require
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.nodes.ssh.render import render_nfs_pv_manifest
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import NfsExport

pytestmark = pytest.mark.integration


def nfs_url(server: str, path: str, file: str = "") -> str:
    return f"nfs://{server}{path.rstrip('/')}/{file}?version=4"


async def test_nfs_export_and_pv(make_hosts, ssh: SshExecutor) -> None:
    require("ganesha.nfsd", "nfs-ls", "nfs-cat", "nfs-cp")
    if not list(Path("/usr/lib").glob("*/ganesha/libfsalvfs.so")):
        pytest.skip("nfs-ganesha's VFS module is not installed (package nfs-ganesha-vfs)")
    server, client, outsider = make_hosts(3)
    steps = SshStepExecutor(ssh, {server.address: server.target()})
    # the export must be on a file system with file handles: the hosts' overlay root has none here
    await ssh.run(
        server.target(),
        "mkdir -p /srv/nfs/vol1 && mount -t tmpfs -o size=32m tmpfs /srv/nfs/vol1 "
        "&& echo 'hello from the server' > /srv/nfs/vol1/hello.txt",
        check=True,
    )
    export = NfsExport("/srv/nfs/vol1", clients=(f"{client.address}/32",), bind_addr=server.address)
    res = await steps.run(server.address, export)
    assert res.changed
    assert not (await steps.run(server.address, export)).changed

    pv = render_nfs_pv_manifest("vol1", server=server.address, path=res.data["pseudo"], capacity="32Mi")
    assert pv["kind"] == "PersistentVolume"
    assert pv["spec"]["nfs"] == {"server": server.address, "path": "/srv/nfs/vol1"}
    assert pv["spec"]["accessModes"] == ["ReadWriteMany"]
    nfs = pv["spec"]["nfs"]

    # an allowed client reads and writes through the PV's server/path
    cat = await ssh.run(client.target(), ["nfs-cat", nfs_url(nfs["server"], nfs["path"], "hello.txt")])
    assert cat.ok and cat.stdout == "hello from the server\n", cat.stderr
    await ssh.put_file(client.target(), "/tmp/from-client.txt", "written by the client\n")
    cp = await ssh.run(client.target(), ["nfs-cp", "/tmp/from-client.txt",
                                         nfs_url(nfs["server"], nfs["path"], "from-client.txt")])
    assert cp.ok, cp.stderr
    assert await ssh.get_file(server.target(), "/srv/nfs/vol1/from-client.txt") == b"written by the client\n"
    ls = await ssh.run(client.target(), ["nfs-ls", nfs_url(nfs["server"], nfs["path"])], check=True)
    assert "hello.txt" in ls.stdout and "from-client.txt" in ls.stdout

    # a host outside `clients` is refused
    denied = await ssh.run(outsider.target(), ["nfs-cat", nfs_url(nfs["server"], nfs["path"], "hello.txt")],
                           timeout=30)
    assert not denied.ok and "hello from the server" not in denied.stdout

    # widening the clients restarts ganesha with the new export list; the outsider gets in
    wider = NfsExport("/srv/nfs/vol1", clients=(client.address, outsider.address), bind_addr=server.address)
    assert (await steps.run(server.address, wider)).changed
    ok = await ssh.run(outsider.target(), ["nfs-cat", nfs_url(nfs["server"], nfs["path"], "hello.txt")],
                       timeout=30)
    assert ok.ok and ok.stdout == "hello from the server\n", ok.stderr
    conf = (await ssh.get_file(server.target(), "/etc/ganesha/ganesha.conf")).decode()
    assert f"Clients = {client.address}, {outsider.address};" in conf
