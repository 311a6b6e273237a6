"""HAProxy backend steps: backends change and HAProxy reloads while clients keep connecting."""

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
from vnfm.nodesteps import Backend, HaproxyApplyConfig, HaproxySetBackends, StepFailed

pytestmark = pytest.mark.integration
PORT = 6443

# greets with its name, then echoes lines: stands in for a kube-apiserver
BACKEND = """
import socket, sys, threading
name, port = sys.argv[1], int(sys.argv[2])
srv = socket.create_server(("0.0.0.0", port), backlog=128)
def serve(c):
    with c, c.makefile("rwb") as f:
        f.write(name.encode() + b"\\n"); f.flush()
        for line in f:
            f.write(line); f.flush()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


async def start_backend(ssh: SshExecutor, h: TestHost) -> None:
    await ssh.put_file(h.target(), "/opt/vnfm-test/backend.py", BACKEND)
    await ssh.run(
        h.target(),
        f"nohup setsid /usr/bin/python3 /opt/vnfm-test/backend.py {h.name} {PORT} >/var/log/backend.log 2>&1 "
        f"</dev/null & for i in $(seq 500); do (exec 3<>/dev/tcp/127.0.0.1/{PORT}) 2>/dev/null && exit 0; "
        "sleep 0.01; done; exit 1",
        check=True,
    )


async def one_connection(addr: str) -> str:
    r, w = await asyncio.wait_for(asyncio.open_connection(addr, PORT), 3)
    try:
        name = (await asyncio.wait_for(r.readline(), 3)).decode().strip()
        w.write(b"x\n")
        await w.drain()
        if not name or await asyncio.wait_for(r.readline(), 3) != b"x\n":
            raise RuntimeError(f"bad answer through the LB (greeting {name!r})")
        return name
    finally:
        w.close()


@dataclass
class Load:
    addr: str
    seen: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)
    long_echoes: int = 0
    long_backend: str = ""
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def fresh(self) -> None:
        while not self.stop.is_set():
            try:
                self.seen[await one_connection(self.addr)] += 1
            except Exception as e:  # noqa: BLE001 - every failure counts
                self.failures.append(f"{type(e).__name__}: {e}")
            await asyncio.sleep(0.002)

    async def long_lived(self) -> None:
        try:
            r, w = await asyncio.open_connection(self.addr, PORT)
            self.long_backend = (await r.readline()).decode().strip()
            while not self.stop.is_set():
                w.write(b"ping\n")
                await w.drain()
                if await asyncio.wait_for(r.readline(), 3) != b"ping\n":
                    raise RuntimeError("long-lived connection: bad echo")
                self.long_echoes += 1
                await asyncio.sleep(0.05)
            w.close()
        except Exception as e:  # noqa: BLE001
            self.failures.append(f"long-lived {type(e).__name__}: {e}")


async def converged(addr: str, allowed: set[str], deadline: float = 10.0) -> None:
    """New connections reach only `allowed` backends (8 in a row), within the deadline."""
    end = time.monotonic() + deadline
    streak = 0
    last = ""
    while streak < 8:
        last = await one_connection(addr)
        streak = streak + 1 if last in allowed else 0
        if time.monotonic() > end:
            raise AssertionError(f"still reaching {last}, expected only {sorted(allowed)}")


async def test_haproxy_backends_reload_without_failures(make_hosts, ssh: SshExecutor) -> None:
    require("haproxy")
    lb, b1, b2, b3 = make_hosts(4)
    await asyncio.gather(*(start_backend(ssh, b) for b in (b1, b2, b3)))
    steps = SshStepExecutor(ssh, {lb.address: lb.target()})

    def backends(*hs: TestHost) -> HaproxySetBackends:
        return HaproxySetBackends(
            tuple(Backend(h.name, h.address, PORT) for h in hs), frontend_port=PORT, check_interval_ms=500
        )

    first = await steps.run(lb.address, backends(b1, b2))
    assert first.changed and first.data["action"] == "start"
    master = first.data["master_pid"]
    await converged(lb.address, {b1.name, b2.name})
    again = await steps.run(lb.address, backends(b1, b2))
    assert not again.changed and again.data["action"] == "none"

    load = Load(lb.address)
    tasks = [asyncio.create_task(load.fresh()), asyncio.create_task(load.long_lived())]
    try:
        for hs in ((b2, b3), (b3, b1), (b1, b2, b3)):
            res = await steps.run(lb.address, backends(*hs))
            assert res.changed and res.data["action"] == "reload" and res.data["master_pid"] == master
            await converged(lb.address, {h.name for h in hs})

        # a broken configuration is refused; the running one keeps serving
        cfg_before = await ssh.get_file(lb.target(), "/etc/haproxy/haproxy.cfg")
        broken = cfg_before.decode().replace("balance roundrobin", "balance roundrobin\n  sever typo 1.2.3.4:1")
        with pytest.raises(StepFailed) as ei:
            await steps.run(lb.address, HaproxyApplyConfig(broken))
        assert "rejected" in str(ei.value) and lb.address in str(ei.value)
        assert await ssh.get_file(lb.target(), "/etc/haproxy/haproxy.cfg") == cfg_before
        await converged(lb.address, {b1.name, b2.name, b3.name})
        # after every reload, fresh connections keep coming and the long-lived one keeps echoing
        n_before, echoes_before = sum(load.seen.values()), load.long_echoes
        end = time.monotonic() + 5
        while (sum(load.seen.values()) < n_before + 20 or load.long_echoes < echoes_before + 5) \
                and time.monotonic() < end:
            await asyncio.sleep(0.02)
    finally:
        load.stop.set()
        await asyncio.gather(*tasks)

    assert load.failures == [], load.failures[:5]
    assert set(load.seen) == {b1.name, b2.name, b3.name}, load.seen
    assert sum(load.seen.values()) > 100
    assert load.long_echoes >= echoes_before + 5 and load.long_backend  # survived every reload on its old worker
    ps = await ssh.run(lb.target(), ["cat", "/run/haproxy.pid"], check=True)
    assert int(ps.stdout.split()[0]) == master


async def test_haproxy_backends_follow_control_plane_scale(make_hosts, ssh: SshExecutor) -> None:
    """Issue 27 item 4: the backends a master's HAProxy gets at each step of 1 -> 3 -> 5 -> 3 masters
    (one master added or removed at a time), with clients connecting all along: none fails, and new
    connections reach exactly the masters of that moment."""
    require("haproxy")
    lb, *masters = make_hosts(6)
    await asyncio.gather(*(start_backend(ssh, b) for b in masters))
    steps = SshStepExecutor(ssh, {lb.address: lb.target()})
    sizes = (1, 2, 3, 4, 5, 4, 3)
    first = await steps.run(lb.address, HaproxySetBackends(
        (Backend(masters[0].name, masters[0].address, PORT),), frontend_port=PORT, check_interval_ms=500))
    assert first.changed and first.data["action"] == "start"
    await converged(lb.address, {masters[0].name})
    load = Load(lb.address)
    task = asyncio.create_task(load.fresh())
    try:
        for n in sizes[1:]:
            now = masters[:n]
            res = await steps.run(lb.address, HaproxySetBackends(
                tuple(Backend(h.name, h.address, PORT) for h in now), frontend_port=PORT, check_interval_ms=500))
            assert res.changed and res.data["action"] == "reload"
            await converged(lb.address, {h.name for h in now})
    finally:
        load.stop.set()
        await task
    assert load.failures == [], load.failures[:5]
    assert set(load.seen) == {h.name for h in masters}, load.seen
