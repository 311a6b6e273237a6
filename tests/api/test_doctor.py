"""GET /vnfm/v1/doctor: the configuration, the database, the engine, every VIM through the
registry's probe, SSH to the VNFCs on real clouds (a banner within a deadline, all at once)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from vnfm.entrypoints.api.doctor import ssh_banner, ssh_findings

from .conftest import Api, seed_body

DEADLINE = 0.5  # seconds per node here (SSH_TIMEOUT in the server)


def by_check(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in report["findings"]}


async def test_findings_name_what_is_wrong_and_what_to_do(onboarded: tuple[Api, str, str]) -> None:
    api, _pkg, vnfd_id = onboarded
    await api.instantiated(vnfd_id, seed_body())  # on the simulated cloud: no SSH to check
    vim = api.core.vims.register_body({"name": "os1", "vimType": "openstack", "accessInfo": {
        "authUrl": "https://keystone.example:5000/v3", "username": "admin", "password": "pw", "project": "p"}})
    seen: list[str] = []

    def probe(v: Any) -> str | None:  # the registry's probe port: None when Keystone takes the credentials
        seen.append(v.id)
        return "Keystone at https://keystone.example:5000/v3 refused the credentials (401)"

    api.core.vims.probes["openstack"] = probe
    r = await api.c.get("/vnfm/v1/doctor")
    assert r.status_code == 200, r.text
    report = r.json()
    found = by_check(report)
    assert found["database"]["status"] == "ok" and found["engine"]["status"] == "ok"
    assert found["config.fault_injection"]["status"] == "problem"  # the API tests run with it on
    assert found["config.secret_key"]["status"] == "warning" and "back it up" in found["config.secret_key"]["fix"]
    bad = found[f"vim os1 ({vim.id})"]
    assert bad["status"] == "problem" and "refused the credentials" in bad["detail"]
    assert "--openrc" in bad["fix"] and seen == [vim.id]
    assert found["ssh"]["detail"] == "no VNFC on a real cloud to reach"
    assert report["problems"] == 2
    assert "pw" not in r.text.replace("problem", "")  # no credential in the answer

    api.core.vims.probes["openstack"] = lambda v: None
    found = by_check((await api.c.get("/vnfm/v1/doctor")).json())
    assert found[f"vim os1 ({vim.id})"]["status"] == "ok"


@pytest.fixture
def banner_servers() -> Iterator[dict[str, int]]:
    """Ports on 127.0.0.1: one answering as an SSH server, one as something else, one closed."""
    socks: list[socket.socket] = []
    ports: dict[str, int] = {}
    stop = False

    def serve(sock: socket.socket, greeting: bytes) -> None:
        sock.settimeout(0.2)
        while not stop:
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            conn.sendall(greeting)
            conn.close()

    import threading

    for name, greeting in (("ssh", b"SSH-2.0-OpenSSH_9.2p1 Debian\r\n"), ("http", b"HTTP/1.1 400 Bad Request\r\n")):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        socks.append(s)
        ports[name] = s.getsockname()[1]
        threading.Thread(target=serve, args=(s, greeting), daemon=True).start()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    ports["closed"] = closed.getsockname()[1]
    closed.close()
    yield ports
    stop = True
    for s in socks:
        s.close()


async def test_ssh_banner(banner_servers: dict[str, int]) -> None:
    assert await ssh_banner("127.0.0.1", banner_servers["ssh"]) is None
    why = await ssh_banner("127.0.0.1", banner_servers["http"])
    assert why is not None and "not as an SSH server" in why
    why = await ssh_banner("127.0.0.1", banner_servers["closed"])
    assert why is not None and "does not answer (ConnectionRefusedError" in why


async def test_ssh_nodes_are_checked_at_once(banner_servers: dict[str, int]) -> None:
    """A node that swallows the connection costs one deadline, not one per node."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts (backlog) and never says anything
    try:
        port = silent.getsockname()[1]
        start = time.monotonic()
        found = await ssh_findings([(f"ssh node{i}", "127.0.0.1") for i in range(4)], port=port, timeout=DEADLINE)
        took = time.monotonic() - start
    finally:
        silent.close()
    assert all(f.status == "problem" and "let TCP 22 in" in f.fix for f in found) and len(found) == 4
    assert DEADLINE <= took < 2 * DEADLINE
    ok = await ssh_findings([("ssh a", "127.0.0.1")], port=banner_servers["ssh"])
    assert [f.status for f in ok] == ["ok"]
