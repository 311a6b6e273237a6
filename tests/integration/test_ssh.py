"""SshExecutor against real sshd on test hosts."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time

import asyncssh
import pytest

from vnfm.adapters.remote.ssh import (
    HostKeyChanged,
    SshAuthError,
    SshExecutor,
    SshTarget,
    SshTimeout,
    fingerprint,
)

pytestmark = pytest.mark.integration


async def test_command_exit_status_and_quoting(make_hosts, ssh: SshExecutor) -> None:
    (h,) = make_hosts(1)
    r = await ssh.run(h.target(), ["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (r.exit_status, r.stdout, r.stderr) == (3, "out\n", "err\n")
    r = await ssh.run(h.target(), ["printf", "%s|", "a b", "$HOME", "it's"])
    assert r.stdout == "a b|$HOME|it's|"
    r = await ssh.run(h.target(), "hostname; cat /etc/hostname", check=True)
    assert r.stdout.split() == [h.name, h.name]
    r = await ssh.run(h.target(), ["cat"], stdin="fed on stdin\n")
    assert r.stdout == "fed on stdin\n"


async def test_hosts_are_isolated(make_hosts, ssh: SshExecutor) -> None:
    a, b = make_hosts(2)
    await ssh.run(a.target(), "echo mine > /etc/vnfm-isolation-marker", check=True)
    assert (await ssh.run(a.target(), ["cat", "/etc/vnfm-isolation-marker"])).stdout == "mine\n"
    assert (await ssh.run(b.target(), ["test", "-e", "/etc/vnfm-isolation-marker"])).exit_status == 1
    assert not os.path.exists("/etc/vnfm-isolation-marker")
    ps = await ssh.run(a.target(), ["ps", "-e", "-o", "pid=,comm="], check=True)
    assert ps.stdout.split()[:2] == ["1", "tini"]  # its own pid namespace


async def test_file_transfer(make_hosts, ssh: SshExecutor) -> None:
    (h,) = make_hosts(1)
    data = bytes(range(256)) * 4096  # 1 MiB, binary
    await ssh.put_file(h.target(), "/opt/vnfm/deep/dir/blob.bin", data, mode=0o640)
    assert await ssh.get_file(h.target(), "/opt/vnfm/deep/dir/blob.bin") == data
    st = await ssh.run(h.target(), ["stat", "-c", "%a %U", "/opt/vnfm/deep/dir/blob.bin"], check=True)
    assert st.stdout.strip() == "640 root"
    await ssh.put_file(h.target(), "/opt/vnfm/deep/dir/blob.bin", "replaced\n")
    assert await ssh.get_file(h.target(), "/opt/vnfm/deep/dir/blob.bin") == b"replaced\n"
    st = await ssh.run(h.target(), ["stat", "-c", "%a", "/opt/vnfm/deep/dir/blob.bin"], check=True)
    assert st.stdout.strip() == "600"
    leftovers = await ssh.run(h.target(), "ls -A /opt/vnfm/deep/dir", check=True)
    assert leftovers.stdout.split() == ["blob.bin"]


async def test_secrets_travel_on_stdin_only(make_hosts, caplog: pytest.LogCaptureFixture) -> None:
    (h,) = make_hosts(1)
    secret = "s3cr3t-" + "x" * 20
    script = r"""
set -euo pipefail
# every command line on the host while the secret is in use
ps -eo args > /tmp/args.txt
cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ' >> /tmp/args.txt || true
if grep -q -- "$DB_PASSWORD" /tmp/args.txt; then echo "LEAK"; fi
printf '%s' "$DB_PASSWORD" | sha256sum | cut -d' ' -f1
printf 'cfg=%s\n' "$CFG"
printf 'exported_cfg=%s\n' "$(printenv CFG || true)"
printf 'arg=%s\n' "$1"
# the script's own stdin is /dev/null, not the rest of the payload
if read -r line; then echo "stdin:$line"; else echo "stdin:empty"; fi
"""
    caplog.set_level(logging.DEBUG)
    async with SshExecutor() as ex:
        r = await ex.run_script(
            h.target(), script, args=["first arg"], env_secrets={"DB_PASSWORD": secret},
            stdin_vars={"CFG": "a 'quoted' $value"}, name="secret-test", check=True,
        )
    lines = r.stdout.splitlines()
    assert "LEAK" not in lines
    assert lines[0] == hashlib.sha256(secret.encode()).hexdigest()
    assert "cfg=a 'quoted' $value" in lines
    assert "exported_cfg=" in lines
    assert "arg=first arg" in lines
    assert "stdin:empty" in lines
    assert secret not in caplog.text
    # sshd's log on the host does not show it either
    log = h.console()
    assert secret not in log


async def test_timeout_names_host_and_command(make_hosts, ssh: SshExecutor) -> None:
    (h,) = make_hosts(1)
    t0 = time.monotonic()
    with pytest.raises(SshTimeout) as ei:
        await ssh.run(h.target(), ["sleep", "30"], timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert h.address in str(ei.value) and "sleep 30" in str(ei.value)
    # the connection is still usable
    assert (await ssh.run(h.target(), ["echo", "ok"], timeout=10)).stdout == "ok\n"


async def test_parallel_fan_out_to_20_hosts(make_hosts) -> None:
    t0 = time.monotonic()
    hosts = make_hosts(20)
    started = time.monotonic() - t0
    async with SshExecutor(max_parallel=32) as ex:
        t1 = time.monotonic()

        async def probe(t: SshTarget) -> str:
            r = await ex.run(t, "hostname; sleep 0.3", check=True)
            return r.stdout.strip()

        names = await ex.fan_out([h.target() for h in hosts], probe)
        elapsed = time.monotonic() - t1
    assert names == [h.name for h in hosts]
    # 20 x 0.3 s in sequence would be 6 s: they ran in parallel
    assert elapsed < 4.0, f"fan-out took {elapsed:.2f}s"
    assert started < 15.0, f"starting 20 hosts took {started:.2f}s"


async def test_fan_out_collects_failures(make_hosts, ssh: SshExecutor) -> None:
    hosts = make_hosts(2)
    results = await ssh.fan_out(
        [h.target() for h in hosts],
        lambda t: ssh.run(t, ["false"] if t.host == hosts[0].address else ["true"], check=True),
        return_exceptions=True,
    )
    assert isinstance(results[0], Exception) and hosts[0].address in str(results[0])
    assert results[1].ok


async def test_host_key_pinning(make_hosts) -> None:
    (h,) = make_hosts(1)
    recorded: list[str] = []
    tofu = h.target(pin=False)
    async with SshExecutor(on_host_key=lambda t, k: recorded.append(k)) as ex:
        key = await ex.connect(tofu)  # first contact: the key is recorded and returned
        assert key == h.host_key and recorded == [h.host_key]
        assert (await ex.run(tofu, ["true"])).ok
        old_key = h.host_key
        h.restart(new_host_key=True)  # same address, a different host key
        assert h.host_key != old_key
        with pytest.raises(HostKeyChanged) as ei:
            await ex.run(tofu, ["true"])  # the executor pinned the first key
        msg = str(ei.value)
        assert h.address in msg and fingerprint(old_key) in msg and fingerprint(h.host_key) in msg
        ex.repin(tofu)  # a healed VNFC: accept its new key
        assert await ex.connect(tofu) == h.host_key
        assert recorded == [old_key, h.host_key]
    # a caller that stored the old key is refused, even by a fresh executor
    stale = SshTarget(h.address, username="root", private_key=h.bed.client_key_pem, known_host_key=old_key)
    async with SshExecutor() as ex2:
        with pytest.raises(HostKeyChanged):
            await ex2.run(stale, ["true"])
        ex2.repin(stale, h.host_key)
        fresh = SshTarget(h.address, username="root", private_key=h.bed.client_key_pem)
        assert (await ex2.run(fresh, ["true"])).ok


async def test_password_and_key_login(make_hosts) -> None:
    (h,) = make_hosts(1)
    async with SshExecutor() as ex:
        r = await ex.run(h.target(key=False, password=True), ["id", "-un"], check=True)
        assert r.stdout == "root\n"
        r = await ex.run(h.target(key=True, password=False), ["id", "-un"], check=True)
        assert r.stdout == "root\n"
    wrong_pw = SshTarget(h.address, username="root", password="not-the-password", known_host_key=h.host_key)
    async with SshExecutor() as ex:
        with pytest.raises(SshAuthError) as ei:
            await ex.run(wrong_pw, ["true"])
        assert "not-the-password" not in str(ei.value) and h.address in str(ei.value)
    other_key = asyncssh.generate_private_key("ssh-ed25519").export_private_key().decode()
    stranger = SshTarget(h.address, username="root", private_key=other_key, known_host_key=h.host_key)
    async with SshExecutor() as ex:
        with pytest.raises(SshAuthError):
            await ex.run(stranger, ["true"])


async def test_reconnects_after_host_restart(make_hosts, ssh: SshExecutor) -> None:
    (h,) = make_hosts(1)
    assert (await ssh.run(h.target(), ["true"])).ok
    await asyncio.to_thread(h.restart)  # same key: the cached connection is dead, a new one is made
    assert (await ssh.run(h.target(), ["echo", "back"])).stdout == "back\n"
