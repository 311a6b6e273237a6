"""The REAL keepalived and containerd (Debian packages) in test hosts, configured by the driver's node
steps (keepalived.sh, containerd_registries.sh, registry_client.sh) and run through the systemctl of
services.py (no systemd here).

- VIP failover checked by traffic: 3 masters, each with the driver's HAProxy (frontend 8383 over
  every master's API port 6443) and keepalived step (priorities 150/140/130 and unicast peers, as
  `cluster/endpoint.keepalived` gives them); a client reaches the API port through the VIP; HAProxy
  is killed on the VIP holder; the VIP moves to the next master and the client gets through again.
  The "API server" on 6443 is a STAND-IN (a TCP greeter naming its host): no kube-apiserver here.
- containerd loads the configuration vnfm writes (config_path + registry credentials block in
  config.toml, hosts.toml for a plain-HTTP registry by name) and pulls an image from a registry on
  another host through it. The pull is `ctr --hosts-dir` (the resolver and hosts.toml the CRI
  plugin uses); the CRI plugin's own pull needs crictl, which is not available here.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from tests.integration import services
from tests.integration.conftest import require
from tests.integration.harness import NET, TestHost
from tests.integration.test_registry import build_oci_image, skopeo
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import ContainerdRegistries, RegistryClientConfig, RegistryServe
from vnfm.nodesteps.lb import Backend, HaproxySetBackends, KeepalivedVip
from vnfm.nodesteps.registry import RegistryAuthEntry

pytestmark = pytest.mark.integration

VIP = f"{NET}.251"
API_PORT, LB_PORT = 6443, 8383
FAILOVER_DEADLINE = 20.0
# STAND-IN for the Kubernetes API server: answers every connection with its host's name
GREETER = ("import socket, socketserver\n"
           "class H(socketserver.BaseRequestHandler):\n"
           "    def handle(self): self.request.sendall(socket.gethostname().encode() + b'\\n')\n"
           "socketserver.ThreadingTCPServer.allow_reuse_address = True\n"
           "socketserver.ThreadingTCPServer(('0.0.0.0', 6443), H).serve_forever()\n")
REG_NAME = "registry.vnfm.test"


def through_vip(timeout: float = 2.0) -> str | None:
    """One client connection to VIP:LB_PORT: the name of the API server that answered, or None."""
    try:
        with socket.create_connection((VIP, LB_PORT), timeout=timeout) as s:
            s.settimeout(timeout)
            return s.recv(100).decode().strip() or None
    except OSError:
        return None


async def holders(ssh: SshExecutor, hosts: list[TestHost]) -> list[str]:
    res = await asyncio.gather(*(ssh.run(h.target(), ["ip", "-4", "-o", "addr", "show"], check=True) for h in hosts))
    return [h.name for h, r in zip(hosts, res, strict=True) if f" {VIP}/" in r.stdout]


async def wait_for(what: str, check, deadline: float = FAILOVER_DEADLINE):  # noqa: ANN001, ANN201
    end = time.monotonic() + deadline
    delay = 0.05
    while True:
        got = await check()
        if got:
            return got
        assert time.monotonic() < end, f"{what}: not within {deadline}s"
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.5)


async def test_keepalived_vip_fails_over_when_haproxy_dies(make_hosts, ssh: SshExecutor) -> None:
    require("keepalived", "haproxy", "python3")
    masters = make_hosts(3)
    steps = SshStepExecutor(ssh, {h.address: h.target() for h in masters})
    lb = HaproxySetBackends(tuple(Backend(h.name, h.address, API_PORT) for h in masters), frontend_port=LB_PORT)
    for i, h in enumerate(masters):
        await services.install(ssh, h)
        await ssh.run_script(h.target(), f"nohup setsid python3 -c \"{GREETER}\" >/var/log/greeter.log 2>&1 "
                             "</dev/null &\n", check=True)
        await steps.run(h.address, lb)
        peers = tuple(o.address for o in masters if o is not h)
        res = await steps.run(h.address, KeepalivedVip(VIP, h.address, 150 - 10 * i, peers))
        assert res.changed

    async def held_by_one() -> list[str] | None:
        got = await holders(ssh, masters)
        return got if len(got) == 1 else None

    assert await wait_for("the VIP held by one master", held_by_one) == [masters[0].name]
    assert await wait_for("a client through the VIP", _through) in {h.name for h in masters}
    # a re-run with the same configuration changes nothing and keeps the VIP where it is
    again = await steps.run(masters[0].address, KeepalivedVip(VIP, masters[0].address, 150,
                                                             tuple(o.address for o in masters[1:])))
    assert not again.changed and await holders(ssh, masters) == [masters[0].name]

    # HAProxy dies on the holder: keepalived's check fails there, the VIP moves to the next master
    await ssh.run(masters[0].target(), "kill -9 $(pgrep -x haproxy)", check=True)
    t0 = time.monotonic()

    async def moved() -> list[str] | None:
        got = await holders(ssh, masters)
        return got if got == [masters[1].name] else None

    await wait_for("the VIP on the next master", moved)
    took = time.monotonic() - t0
    answer = await wait_for("a client through the moved VIP", _through)
    assert answer in {h.name for h in masters}
    log = await services.log(ssh, masters[0], "keepalived")
    assert "chk_haproxy" in log, log
    print(f"VIP moved in {took:.1f}s")


async def _through() -> str | None:
    return await asyncio.to_thread(through_vip)


async def test_containerd_loads_vnfms_registry_config_and_pulls_through_it(make_hosts, ssh: SshExecutor,
                                                                          tmp_path: Path) -> None:
    require("containerd", "ctr", "docker-registry", "skopeo")
    reg, node = make_hosts(2)
    steps = SshStepExecutor(ssh, {reg.address: reg.target(), node.address: node.target()})
    await steps.run(reg.address, RegistryServe(port=5000))
    image = build_oci_image(tmp_path / "img")
    r = skopeo("copy", "--dest-tls-verify=false", image, f"docker://{reg.address}:5000/demo/tiny:1.0")
    assert r.returncode == 0, r.stderr

    # the node as prepare_node.sh leaves it: containerd's default configuration (its own lines)
    await services.install(ssh, node)
    script = (Path(__file__).parents[2] / "src/vnfm/adapters/nodes/ssh/scripts/prepare_node.sh").read_text()
    ours = ("mkdir -p /etc/containerd", "containerd config default")
    lines = [ln for ln in script.splitlines() if ln.startswith(ours)]
    assert len(lines) == 2, lines
    await ssh.run_script(node.target(), "set -euo pipefail\n" + "\n".join(lines) + "\nsystemctl restart containerd\n",
                         check=True)

    # vnfm's registry configuration: credentials block + config_path, hosts.toml, /etc/hosts entry
    auth = ContainerdRegistries(auth=(RegistryAuthEntry(f"{REG_NAME}:5000", "puller", "pull-s3cret"),))
    assert (await steps.run(node.address, auth)).changed
    cfg = RegistryClientConfig(f"{REG_NAME}:5000", plain_http=True, hosts_entry=(reg.address, REG_NAME))
    assert (await steps.run(node.address, cfg)).changed

    # the running containerd loaded that file: its effective configuration shows config_path, the
    # CRI plugin is up, and a pull by name goes through the hosts.toml (http://, no TLS flag given)
    dump = await ssh.run(node.target(), ["containerd", "--config", "/etc/containerd/config.toml", "config", "dump"],
                         check=True)
    assert 'config_path = "/etc/containerd/certs.d"' in dump.stdout
    plugins = await ssh.run(node.target(), ["ctr", "plugins", "ls"], check=True)
    cri = [ln for ln in plugins.stdout.splitlines() if "io.containerd.grpc.v1" in ln and " cri " in ln]
    assert cri and cri[0].split()[-1] == "ok", plugins.stdout
    pull = await ssh.run(node.target(), ["ctr", "-n", "k8s.io", "images", "pull", "--hosts-dir",
                                         "/etc/containerd/certs.d", f"{REG_NAME}:5000/demo/tiny:1.0"], timeout=60)
    assert pull.ok, (pull.stderr, await services.log(ssh, node, "containerd"))
    listed = await ssh.run(node.target(), ["ctr", "-n", "k8s.io", "images", "ls", "-q"], check=True)
    assert f"{REG_NAME}:5000/demo/tiny:1.0" in listed.stdout.split()
    log = await services.log(ssh, node, "containerd")
    assert "pull-s3cret" not in log and "failed to load" not in log.lower(), log
