"""An external load balancer shared by several owners (LbFrontends over SSH, real HAProxy): each
owner's part is its own file, other owners' files stay byte-identical, a port belongs to one owner,
a broken configuration is never activated, re-running changes nothing, and the owners that stay
keep carrying traffic without a single failed connection while the others change or leave."""

from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass, field

import pytest

from tests.integration.conftest import require
from tests.integration.harness import TestHost
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import StepFailed
from vnfm.nodesteps.lb import Backend, Frontend, LbFrontends, ServerPool

pytestmark = pytest.mark.integration
CONF_DIR = "/etc/haproxy/vnfm.d"
MAIN_CFG = "/etc/haproxy/vnfm.cfg"
API, NODEPORT_A, NODEPORT_A_HEALED, NODEPORT_B = 6443, 30080, 31080, 30090
LB_API = 8383

# on each node: answers every connection on each port with "<host>:<port>", then echoes lines
SERVER = """
import socket, sys, threading
name, ports = sys.argv[1], [int(p) for p in sys.argv[2:]]
def serve(c, port):
    with c, c.makefile("rwb") as f:
        f.write(f"{name}:{port}\\n".encode()); f.flush()
        for line in f:
            f.write(line); f.flush()
def listen(port):
    srv = socket.create_server(("0.0.0.0", port), backlog=128)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c, port), daemon=True).start()
for p in ports:
    threading.Thread(target=listen, args=(p,)).start()
"""


async def start_servers(ssh: SshExecutor, h: TestHost, ports: list[int]) -> None:
    await ssh.put_file(h.target(), "/opt/vnfm-test/servers.py", SERVER)
    probe = " && ".join(f"(exec 3<>/dev/tcp/127.0.0.1/{p})" for p in ports)
    await ssh.run(
        h.target(),
        f"nohup setsid /usr/bin/python3 /opt/vnfm-test/servers.py {h.name} {' '.join(map(str, ports))} "
        f">/var/log/servers.log 2>&1 </dev/null & for i in $(seq 500); do {{ {probe}; }} 2>/dev/null && exit 0; "
        "sleep 0.01; done; exit 1",
        check=True,
    )


async def one_connection(addr: str, port: int) -> str:
    r, w = await asyncio.wait_for(asyncio.open_connection(addr, port), 3)
    try:
        greeting = (await asyncio.wait_for(r.readline(), 3)).decode().strip()
        w.write(b"x\n")
        await w.drain()
        if not greeting or await asyncio.wait_for(r.readline(), 3) != b"x\n":
            raise RuntimeError(f"bad answer through the LB on :{port} (greeting {greeting!r})")
        return greeting
    finally:
        w.close()


async def converged(addr: str, port: int, allowed: set[str], deadline: float = 10.0) -> None:
    """New connections to `port` reach only `allowed` backends (8 in a row), within the deadline."""
    end = time.monotonic() + deadline
    streak, last = 0, ""
    while streak < 8:
        try:
            last = await one_connection(addr, port)
            streak = streak + 1 if last in allowed else 0
        except (OSError, RuntimeError) as e:
            last, streak = f"{type(e).__name__}: {e}", 0
        if time.monotonic() > end:
            raise AssertionError(f":{port} still answers {last!r}, expected only {sorted(allowed)}")


async def refused(addr: str, port: int, deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while True:
        try:
            await one_connection(addr, port)
        except (OSError, RuntimeError):
            return
        if time.monotonic() > end:
            raise AssertionError(f":{port} still served")


@dataclass
class Clients:
    """Clients connecting continuously (a fresh connection each time) to ports of the LB."""

    addr: str
    ports: tuple[int, ...]
    seen: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def loop(self, port: int) -> None:
        while not self.stop.is_set():
            try:
                self.seen[await one_connection(self.addr, port)] += 1
            except Exception as e:  # noqa: BLE001 - every failure counts
                self.failures.append(f":{port} {type(e).__name__}: {e}")
            await asyncio.sleep(0.002)

    def total(self) -> int:
        return sum(self.seen.values())

    async def more(self, n: int, deadline: float = 10.0) -> None:
        """Wait until `n` more connections succeeded."""
        want, end = self.total() + n, time.monotonic() + deadline
        while self.total() < want:
            assert time.monotonic() < end, f"clients stalled: {self.total()}/{want}, failures {self.failures[:3]}"
            await asyncio.sleep(0.02)


def nodeport(owner: str, port: int, nodes: list[TestHost]) -> LbFrontends:
    return LbFrontends(owner, (Frontend("svc", port, tuple(Backend(n.name, n.address, port) for n in nodes)),))


async def test_lb_frontends_owners_share_the_lb_hitless(make_hosts, ssh: SshExecutor) -> None:
    require("haproxy", "flock")
    lb, n1, n2 = make_hosts(3)
    ports = [API, NODEPORT_A, NODEPORT_A_HEALED, NODEPORT_B]
    await asyncio.gather(*(start_servers(ssh, n, ports) for n in (n1, n2)))
    steps = SshStepExecutor(ssh, {lb.address: lb.target()})
    nodes = [n1, n2]

    async def read(path: str) -> bytes:
        return await ssh.get_file(lb.target(), path)

    async def listing() -> list[str]:
        return (await ssh.run(lb.target(), ["ls", "-A", CONF_DIR], check=True)).stdout.split()

    async def workers(master: int) -> str:
        return (await ssh.run(lb.target(), ["ps", "-o", "pid=", "--ppid", str(master)], check=True)).stdout

    # the cluster's part: *:8383 -> every master's :6443, a NodePort pool of every node
    cluster = LbFrontends("cluster", (Frontend("k8s-api", LB_API, tuple(Backend(n.name, n.address, API)
                                                                        for n in nodes)),),
                          pools=(ServerPool("nodeport", tuple((n.name, n.address) for n in nodes)),))
    first = await steps.run(lb.address, cluster)
    assert first.changed and first.data["action"] == "start" and first.data["ports"] == [LB_API]
    master = first.data["master_pid"]
    await converged(lb.address, LB_API, {f"{n1.name}:{API}", f"{n2.name}:{API}"})
    cluster_file = await read(f"{CONF_DIR}/cluster.cfg")
    assert b"backend vnfm_cluster_pool_nodeport" in cluster_file

    # two CNFs' NodePorts, added at the same time: each its own file, the cluster's stays
    # byte-identical (the changes are serialized on the LB, each checked and reloaded whole)
    added = await asyncio.gather(*(steps.run(lb.address, nodeport(owner, port, nodes))
                                   for owner, port in (("cnf-a", NODEPORT_A), ("cnf-b", NODEPORT_B))))
    for res in added:
        assert res.changed and res.data["action"] == "reload" and res.data["master_pid"] == master
    for port in (NODEPORT_A, NODEPORT_B):
        await converged(lb.address, port, {f"{n.name}:{port}" for n in nodes})
    assert await listing() == [".active", ".lock", "cluster.cfg", "cnf-a.cfg", "cnf-b.cfg"]
    assert await read(f"{CONF_DIR}/cluster.cfg") == cluster_file
    b_file = await read(f"{CONF_DIR}/cnf-b.cfg")
    main_file = await read(MAIN_CFG)

    # check-then-act: re-running changes nothing and reloads nothing (same master, same workers)
    before = await workers(master)
    for step in (cluster, nodeport("cnf-a", NODEPORT_A, nodes)):
        again = await steps.run(lb.address, step)
        assert not again.changed and again.data["action"] == "none" and again.data["master_pid"] == master
    assert await workers(master) == before
    # ... unless HAProxy may not run what the files say (an activation that did not finish)
    await ssh.run(lb.target(), ["rm", f"{CONF_DIR}/.active"], check=True)
    redo = await steps.run(lb.address, cluster)
    assert redo.changed and redo.data["action"] == "reload"
    assert (await steps.run(lb.address, cluster)).data["action"] == "none"

    # a port of another owner is refused, naming it; nothing changes
    with pytest.raises(StepFailed) as ei:
        await steps.run(lb.address, nodeport("cnf-c", NODEPORT_B, nodes))
    assert f"port(s) {NODEPORT_B} already served for owner cnf-b" in str(ei.value)
    assert await listing() == [".active", ".lock", "cluster.cfg", "cnf-a.cfg", "cnf-b.cfg"]

    clients = Clients(lb.address, (LB_API, NODEPORT_B))
    tasks = [asyncio.create_task(clients.loop(p)) for p in clients.ports]
    try:
        await clients.more(20)
        # heal entire of CNF a: Kubernetes gave its service another random NodePort; traffic follows
        healed = await steps.run(lb.address, nodeport("cnf-a", NODEPORT_A_HEALED, nodes))
        assert healed.changed and healed.data["action"] == "reload" and healed.data["ports"] == [NODEPORT_A_HEALED]
        await converged(lb.address, NODEPORT_A_HEALED, {f"{n.name}:{NODEPORT_A_HEALED}" for n in nodes})
        await refused(lb.address, NODEPORT_A)
        await clients.more(20)

        # a broken configuration (a backend HAProxy cannot resolve) is refused; the previous file
        # is back and the running configuration keeps serving
        a_file = await read(f"{CONF_DIR}/cnf-a.cfg")
        broken = LbFrontends("cnf-a", (Frontend("svc", NODEPORT_A_HEALED,
                                                (Backend("ghost", "no-such-node.invalid", NODEPORT_A_HEALED),)),))
        with pytest.raises(StepFailed) as ei:
            await steps.run(lb.address, broken)
        assert "haproxy rejected" in str(ei.value) and "no-such-node.invalid" in str(ei.value)
        assert await read(f"{CONF_DIR}/cnf-a.cfg") == a_file
        assert await listing() == [".active", ".lock", "cluster.cfg", "cnf-a.cfg", "cnf-b.cfg"]
        await converged(lb.address, NODEPORT_A_HEALED, {f"{n.name}:{NODEPORT_A_HEALED}" for n in nodes})

        # terminate CNF a: its file goes, its port closes, the others keep serving
        gone = await steps.run(lb.address, LbFrontends("cnf-a", ()))
        assert gone.changed and gone.data["action"] == "reload" and gone.data["ports"] == []
        await refused(lb.address, NODEPORT_A_HEALED)
        assert await listing() == [".active", ".lock", "cluster.cfg", "cnf-b.cfg"]
        again = await steps.run(lb.address, LbFrontends("cnf-a", ()))
        assert not again.changed and again.data["action"] == "none"
        await clients.more(20)
    finally:
        clients.stop.set()
        await asyncio.gather(*tasks)

    # zero failed connections on the owners that stayed, through 2 reloads and a refused change
    assert clients.failures == [], clients.failures[:5]
    for p in (API, NODEPORT_B):  # the backends' ports behind LB_API and NODEPORT_B
        assert {k for k in clients.seen if k.endswith(f":{p}")} == {f"{n1.name}:{p}", f"{n2.name}:{p}"}
    assert clients.total() > 60
    assert await read(f"{CONF_DIR}/cluster.cfg") == cluster_file
    assert await read(f"{CONF_DIR}/cnf-b.cfg") == b_file
    assert await read(MAIN_CFG) == main_file
    ps = await ssh.run(lb.target(), ["cat", "/run/haproxy.pid"], check=True)
    assert int(ps.stdout.split()[0]) == master

    # HAProxy died: the next run of any owner starts it again with every owner's part
    await ssh.run(lb.target(), f"kill {master}; while kill -0 {master} 2>/dev/null; do sleep 0.02; done",
                  check=True, timeout=10)
    await refused(lb.address, LB_API)
    back = await steps.run(lb.address, nodeport("cnf-b", NODEPORT_B, nodes))
    assert back.changed and back.data["action"] == "start" and back.data["master_pid"] != master
    await converged(lb.address, LB_API, {f"{n1.name}:{API}", f"{n2.name}:{API}"})
    await converged(lb.address, NODEPORT_B, {f"{n.name}:{NODEPORT_B}" for n in nodes})


async def test_lb_frontends_refuse_an_haproxy_running_another_configuration(make_hosts, ssh: SshExecutor) -> None:
    """The pid file names a master that does not run the owners' configuration (e.g. a distribution
    service): the step says so and changes nothing, rather than reloading a process that would not
    load the owners' files."""
    require("haproxy", "flock")
    (lb,) = make_hosts(1)
    other = "global\n  master-worker\ndefaults\n  mode tcp\n  timeout client 5s\n  timeout server 5s\n" \
            "  timeout connect 5s\nlisten other\n  bind :9000\n  server s 127.0.0.1:9001\n"
    await ssh.put_file(lb.target(), "/etc/haproxy/other.cfg", other)
    await ssh.run(lb.target(), "haproxy -W -D -p /run/haproxy.pid -f /etc/haproxy/other.cfg", check=True)
    steps = SshStepExecutor(ssh, {lb.address: lb.target()})
    with pytest.raises(StepFailed) as ei:
        await steps.run(lb.address, nodeport("cnf-a", NODEPORT_A, [lb]))
    assert "runs another configuration than /etc/haproxy/vnfm.cfg + /etc/haproxy/vnfm.d" in str(ei.value)
    left = await ssh.run(lb.target(), ["ls", "-A", CONF_DIR], check=True)
    assert left.stdout.split() == [".lock"]
    assert (await ssh.run(lb.target(), ["test", "-e", MAIN_CFG])).exit_status == 1
