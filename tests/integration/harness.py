"""Lightweight test hosts: each is a network namespace on a private bridge with its own address,
private mount/UTS/PID namespaces, a copy-on-write overlay of the machine's root file system and
its own sshd with its own host key. See hostinit.sh for what runs inside.

Layout (all under BASE, default /run/vnfm-itest, override with VNFM_ITEST_DIR):
    BASE/<name>/upper, work, merged   the host's overlay layers
    BASE/<name>/launcher.pid          pid of the `unshare` process (its child is the host's PID 1)
    BASE/<name>/console.log           stdout/stderr of the host's init and sshd
    BASE/<name>/state/<path>          private state directories bound into the host (BOUND_STATE_DIRS)
Addresses: bridge PREFIXbr0 = NET.1/24 in the root namespace; host i = NET.(10+i)
(NET default 10.232.0, override with VNFM_ITEST_NET; PREFIX default vnfmt, VNFM_ITEST_PREFIX), or
the address a test gives (a simulated VM's: see engine_hosts.py; the bridge then gets one on that
/24 too). No default route inside a host, ip_forward untouched: a host can only talk to the bridge
and the other hosts.

Hermetic: a host sees the machine's programs and configuration (read-only lower layer) but never
its live state: STATE_DIRS start empty (opaque in the host's upper layer; BOUND_STATE_DIRS are
bound from a private directory), and the virtualenv running
the tests is bound into each host at its own path even when it lives under /tmp or /run (which
every host replaces by its own). So the suite behaves the same from any clone path and whatever
podman, containerd or etcd state the machine holds.

A session holds an exclusive flock on BASE.lock, so two pytest sessions never share or clean up
each other's hosts; leftovers of a killed session are removed when the next session starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from vnfm.adapters.remote.ssh import SshTarget

HERE = Path(__file__).resolve().parent
HOSTINIT = HERE / "hostinit.sh"
BASE = Path(os.environ.get("VNFM_ITEST_DIR", "/run/vnfm-itest"))
NET = os.environ.get("VNFM_ITEST_NET", "10.232.0")
PREFIX = os.environ.get("VNFM_ITEST_PREFIX", "vnfmt")
BRIDGE = f"{PREFIX}br0"
NAT_CHAIN = f"{PREFIX.upper()}-FIP"  # the root namespace's NAT of floating IPs (add_floating_ip)
NAT_CHAINS = ((NAT_CHAIN, "OUTPUT"), (f"{NAT_CHAIN}-SRC", "POSTROUTING"))
REPO = HERE.parents[1]
# Daemon state a host must not inherit from the machine: each is an empty opaque directory of the
# host's upper layer (the machine's content below is hidden; the host may remove it like any dir).
STATE_DIRS = (
    "/var/lib/containers", "/var/lib/containerd", "/var/lib/etcd", "/var/lib/docker",
    "/var/lib/docker-registry", "/var/lib/registry", "/var/lib/keepalived", "/var/lib/nfs",
    "/var/lib/haproxy", "/root/.local/share/containers", "/root/.config/containers",
)
# ... and those bound from a private directory outside the overlay instead: containerd's overlayfs
# snapshotter cannot put its layers on an overlay root.
BOUND_STATE_DIRS = ("/var/lib/containerd",)
# What every host replaces by its own (tmpfs), so paths the tests need there are bound in.
_HIDDEN = ("/tmp", "/run")
MAX_HOSTS = 200
START_DEADLINE = 20.0

NEEDED_BINARIES = ("ip", "nsenter", "unshare", "mount", "chroot", "/usr/sbin/sshd", "tini", "openssl")


def unavailable_reason() -> str | None:
    """Why test hosts cannot run here (None when they can)."""
    if os.geteuid() != 0:
        return "integration hosts need root (network/mount/pid namespaces, overlayfs)"
    missing = [b for b in NEEDED_BINARIES if shutil.which(b) is None]
    if missing:
        return f"missing programs {missing} (run .ci/integration-deps.sh)"
    for ns in ("net", "mnt", "pid", "uts"):
        if not Path(f"/proc/self/ns/{ns}").exists():
            return f"kernel without {ns} namespaces"
    try:
        fs = Path("/proc/filesystems").read_text()
    except OSError:
        fs = ""
    if "overlay" not in fs:
        return "kernel without overlayfs"
    return None


def exposed_paths() -> list[str]:
    """The test run's own programs that would be hidden inside hosts (the virtualenv and the Python
    it was made from, when they live under /tmp or /run). Not the clone: hosts see no test code."""
    paths: list[str] = []
    repo = str(REPO)
    # the libraries a virtualenv reaches through a .pth (another venv's site-packages) count too
    libs = [p for p in sys.path if p and os.path.isdir(p) and not (p == repo or p.startswith(repo + "/"))]
    for p in (sys.prefix, sys.base_prefix, *libs):
        for q in (p, os.path.realpath(p)):
            hidden = any(q == h or q.startswith(h + "/") for h in _HIDDEN)
            if hidden and not any(q == x or q.startswith(x + "/") for x in paths):
                paths.append(q)
    return paths


def missing_programs(*names: str) -> list[str]:
    return [n for n in names if shutil.which(n) is None]


def _ip_batch(lines: Iterable[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    text = "\n".join(lines) + "\n"
    args = ["ip", "-force", "-batch", "-"] if not check else ["ip", "-batch", "-"]
    res = subprocess.run(args, input=text, text=True, capture_output=True, check=False)
    if check and res.returncode != 0:
        raise RuntimeError(f"ip -batch failed: {res.stderr.strip()}\n{text}")
    return res


def _listening(pid: int, port: int) -> bool:
    """Whether a TCP socket listens on `port` in the network namespace of process `pid`.
    (Reads /proc/PID/net/tcp: probing the address from outside would wait for ARP while the
    host's interface is still coming up.)"""
    needle = f":{port:04X} "
    try:
        with open(f"/proc/{pid}/net/tcp") as f:
            next(f)
            return any(line.split()[1].endswith(needle.strip()) and line.split()[3] == "0A" for line in f)
    except (OSError, StopIteration, IndexError):
        return False


def _netns_inode(name: str) -> int | None:
    try:
        return os.stat(f"/run/netns/{name}").st_ino
    except OSError:
        return None


def _pids_in_netns(inodes: set[int]) -> list[int]:
    """Pids (root pid namespace) of every process whose network namespace is one of `inodes`."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry.name}/ns/net").st_ino in inodes:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _kill_netns_processes(names: Iterable[str], deadline: float = 10.0) -> None:
    inodes = {i for i in (_netns_inode(n) for n in names) if i is not None}
    if not inodes:
        return
    end = time.monotonic() + deadline
    delay = 0.002
    while True:
        pids = _pids_in_netns(inodes)
        if not pids:
            return
        for p in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
        if time.monotonic() > end:
            raise RuntimeError(f"processes {pids} in test namespaces did not exit")
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _iptables(*args: str, check: bool = False) -> bool:
    res = subprocess.run(["iptables", "-w", "5", "-t", "nat", *args], capture_output=True, text=True, check=False)
    if check and res.returncode != 0:
        raise RuntimeError(f"iptables {' '.join(args)}: {res.stderr.strip()}")
    return res.returncode == 0


def _drop_nat_chain() -> None:
    if shutil.which("iptables") is None:
        return
    for chain, hook in NAT_CHAINS:
        if not _iptables("-n", "-L", chain):
            continue
        while _iptables("-D", hook, "-j", chain):
            pass
        _iptables("-F", chain)
        _iptables("-X", chain)


def _bridge_address_for(address: str) -> str:
    """The bridge's own address on the network of `address`."""
    res = subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", BRIDGE], capture_output=True, text=True,
                         check=True)
    target = ipaddress.ip_address(address)
    for line in res.stdout.splitlines():
        iface = ipaddress.ip_interface(line.split()[3])
        if target in iface.network:
            return str(iface.ip)
    raise RuntimeError(f"the bridge {BRIDGE} has no address on the network of {address}")


@dataclass
class TestHost:
    __test__ = False  # not a pytest test class

    bed: Testbed
    index: int
    name: str
    address: str
    dir: Path
    host_key: str = ""  # the sshd's public host key, "ssh-ed25519 AAAA..."
    extra_addresses: tuple[str, ...] = ()  # more addresses on eth0 (a simulated VM's floating IP)
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def target(
        self,
        *,
        key: bool = True,
        password: bool = False,
        pin: bool = True,
        username: str = "root",
    ) -> SshTarget:
        """An SshTarget for this host: key and/or password login; `pin` passes the known host key."""
        return SshTarget(
            self.address,
            username=username,
            private_key=self.bed.client_key_pem if key else None,
            password=self.bed.root_password if password else None,
            known_host_key=self.host_key if pin else None,
        )

    def console(self) -> str:
        try:
            return (self.dir / "console.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def restart(self, new_host_key: bool = False) -> None:
        """Stop the host (every process in it dies) and start it again on the same upper layer."""
        self.bed.stop_hosts([self])
        if new_host_key:
            self.bed._write_host_key(self)
        self.bed._launch([self])
        self.bed._wait_ready([self])

    def replace(self) -> None:
        """Play the cloud rebuilding this VM: every process dies, the disk (upper layer and state
        directories) starts empty, sshd gets a new host key; name and addresses stay."""
        self.bed.stop_hosts([self])
        for d in ("upper", "work", "merged", "state"):
            shutil.rmtree(self.dir / d, ignore_errors=True)
        self.bed._reset_network(self)
        self.bed._prepare(self)
        self.bed._launch([self])
        self.bed._wait_ready([self])


class Testbed:
    """Creates and destroys test hosts. One per pytest session (see conftest.py)."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        self._lock_fd: int | None = None
        self._hosts: dict[int, TestHost] = {}
        self.client_key_pem = ""
        self.client_public_key = ""
        self.root_password = ""
        self._shadow_hash = ""

    # ------------------------------------------------------------------ session
    def open(self, lock_timeout: float = 600.0) -> None:
        BASE.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(str(BASE) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        end = time.monotonic() + lock_timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > end:
                    os.close(fd)
                    raise RuntimeError("another test session holds the test-host lock") from None
                time.sleep(0.2)
        self._lock_fd = fd
        self.cleanup_leftovers()
        BASE.mkdir(mode=0o700, parents=True)
        _ip_batch(
            [
                f"link add {BRIDGE} type bridge",
                f"addr add {NET}.1/24 dev {BRIDGE}",
                f"link set {BRIDGE} up",
            ]
        )
        key = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key_pem = bytes(key.export_private_key("openssh")).decode()
        self.client_public_key = bytes(key.export_public_key("openssh")).decode().strip()
        self.root_password = secrets.token_urlsafe(12)
        self._shadow_hash = subprocess.run(
            ["openssl", "passwd", "-6", "-stdin"],
            input=self.root_password,
            text=True,
            capture_output=True,
            check=True,
        ).stdout.strip()

    def close(self) -> None:
        try:
            self.destroy_hosts(list(self._hosts.values()))
            self.cleanup_leftovers()
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None

    @staticmethod
    def cleanup_leftovers() -> None:
        """Remove every trace of test hosts: processes, namespaces, bridge, layers."""
        netns_dir = Path("/run/netns")
        names = [n for n in os.listdir(netns_dir) if n.startswith(PREFIX)] if netns_dir.is_dir() else []
        # launchers whose namespace file is already gone still have to die
        if BASE.is_dir():
            for pidfile in BASE.glob("*/launcher.pid"):
                with contextlib.suppress(OSError, ValueError):
                    pid = int(pidfile.read_text())
                    if b"unshare" in Path(f"/proc/{pid}/cmdline").read_bytes():
                        os.kill(pid, signal.SIGKILL)
        _kill_netns_processes(names)
        # deleting the root-side veth is synchronous (a namespace's devices go away asynchronously)
        lines = [f"link del {d}" for d in os.listdir("/sys/class/net") if d.startswith(f"v-{PREFIX}")]
        lines += [f"netns del {n}" for n in names]
        if Path(f"/sys/class/net/{BRIDGE}").exists():
            lines.append(f"link del {BRIDGE}")
        _drop_nat_chain()
        if lines:
            _ip_batch(lines, check=False)
        if BASE.exists():
            shutil.rmtree(BASE)

    # ------------------------------------------------------------------ hosts
    def start_hosts(self, n: int, addresses: Iterable[Sequence[str]] = ()) -> list[TestHost]:
        """n fresh hosts; `addresses` gives the first ones their addresses (the first is the host's
        address, the others are added to eth0; each on a /24 the bridge has an address in too,
        add_bridge_address) instead of NET.(10+i)."""
        given = [tuple(a) for a in addresses]
        free = [i for i in range(1, MAX_HOSTS + 1) if i not in self._hosts][:n]
        if len(free) < n:
            raise RuntimeError(f"no room for {n} more test hosts")
        hosts: list[TestHost] = []
        for i in free:
            name = f"{PREFIX}{i}"
            # a host given addresses keeps one on the test bed's own network too (NET.1 serves
            # what every host may reach, e.g. the simulated Kubernetes API)
            addrs = (*given[len(hosts)], f"{NET}.{10 + i}") if len(hosts) < len(given) else (f"{NET}.{10 + i}",)
            h = TestHost(self, i, name, addrs[0], BASE / name, extra_addresses=addrs[1:])
            self._hosts[i] = h
            hosts.append(h)
        try:
            _ip_batch(
                line
                for h in hosts
                for line in (
                    f"netns add {h.name}",
                    f"link add v-{h.name} type veth peer name eth0 netns {h.name}",
                    f"link set v-{h.name} master {BRIDGE} up",
                )
            )
            for h in hosts:
                self._prepare(h)
            self._launch(hosts)
            self._wait_ready(hosts)
        except BaseException:
            self.destroy_hosts(hosts)
            raise
        return hosts

    def _prepare(self, h: TestHost) -> None:
        up = h.dir / "upper"
        for d in ("upper/etc/ssh/sshd_config.d", "upper/root/.ssh", "work", "merged"):
            (h.dir / d).mkdir(parents=True, exist_ok=True)
        (up / "root/.ssh").chmod(0o700)
        for d in STATE_DIRS:  # empty, hiding whatever the machine holds there
            path = up / d.lstrip("/")
            path.mkdir(parents=True, exist_ok=True)
            os.setxattr(path, "trusted.overlay.opaque", b"y")
        self._write_host_key(h)
        (up / "etc/ssh/sshd_config.d/00-vnfm-test.conf").write_text(
            "HostKey /etc/ssh/vnfm_test_host_ed25519_key\n"
            "PermitRootLogin yes\nPasswordAuthentication yes\nKbdInteractiveAuthentication no\n"
            "UseDNS no\nUsePAM no\nPidFile /run/sshd.pid\nMaxStartups 100:30:200\n"
        )
        (up / "etc/hostname").write_text(h.name + "\n")
        (up / "etc/hosts").write_text(f"127.0.0.1 localhost\n127.0.1.1 {h.name}\n{h.address} {h.name}\n")
        (up / "etc/resolv.conf").unlink(missing_ok=True)
        (up / "etc/resolv.conf").write_text("# no resolver inside test hosts\n")
        shadow = []
        for line in Path("/etc/shadow").read_text().splitlines():
            parts = line.split(":")
            if parts[0] == "root":
                parts[1] = self._shadow_hash
            shadow.append(":".join(parts))
        fd = os.open(up / "etc/shadow", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(shadow) + "\n")
        ak = up / "root/.ssh/authorized_keys"
        ak.write_text(self.client_public_key + "\n")
        ak.chmod(0o600)
        # a plain shell profile: the machine's root .bashrc may be slow (pyenv init)
        for rc in (".bashrc", ".profile"):
            src = Path("/etc/skel") / rc
            (up / "root" / rc).write_text(src.read_text() if src.exists() else "")

    @staticmethod
    def _reset_network(h: TestHost) -> None:
        """A rebuilt VM's network starts clean: what its processes added to the host's network
        namespace (a container runtime's bridge and NAT rules) goes; lo and eth0 stay."""
        res = subprocess.run(["ip", "-n", h.name, "-j", "link", "show"], capture_output=True, text=True, check=True)
        extra = [x["ifname"] for x in json.loads(res.stdout) if x["ifname"] not in ("lo", "eth0")]
        for i in extra:
            subprocess.run(["ip", "-n", h.name, "link", "del", i], capture_output=True, check=False)
        if shutil.which("iptables"):
            flush = "for t in filter nat mangle raw; do iptables -w 5 -t $t -F && iptables -w 5 -t $t -X; done"
            subprocess.run(["ip", "netns", "exec", h.name, "sh", "-c", flush], capture_output=True, check=False)

    def _write_host_key(self, h: TestHost) -> None:
        key = asyncssh.generate_private_key("ssh-ed25519")
        path = h.dir / "upper/etc/ssh/vnfm_test_host_ed25519_key"
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(bytes(key.export_private_key("openssh")))
        h.host_key = bytes(key.export_public_key("openssh")).decode().strip()
        path.with_name(path.name + ".pub").write_text(h.host_key + "\n")

    def add_floating_ip(self, floating: str, fixed: str) -> None:
        """Make `floating` reach `fixed` from the root namespace (where vnfm runs) the way a cloud's
        floating IP does: destination NAT, the address is on no host's interface (the bridge needs
        an address on its /24 for the route, add_bridge_address). Removed with the test bed."""
        for chain, hook in NAT_CHAINS:
            if not _iptables("-n", "-L", chain):
                _iptables("-N", chain, check=True)
                _iptables("-I", hook, "-j", chain, check=True)
        self.remove_floating_ip(floating)
        _iptables("-A", NAT_CHAIN, "-d", f"{floating}/32", "-j", "DNAT", "--to-destination", fixed, check=True)
        # the host answers the bridge's address on its own network (it has no route elsewhere);
        # only the root namespace's own connections (bridged host-to-host traffic may pass here too)
        rule = ("-s", f"{_bridge_address_for(floating)}/32", "-d", f"{fixed}/32", "-j", "SNAT", "--to-source",
                _bridge_address_for(fixed))
        if not _iptables("-C", f"{NAT_CHAIN}-SRC", *rule):
            _iptables("-A", f"{NAT_CHAIN}-SRC", *rule, check=True)

    def remove_floating_ip(self, floating: str) -> None:
        target = self._nat_target(floating)
        while target and _iptables("-D", NAT_CHAIN, "-d", f"{floating}/32", "-j", "DNAT", "--to-destination", target):
            pass

    @staticmethod
    def _nat_target(floating: str) -> str | None:
        res = subprocess.run(["iptables", "-t", "nat", "-S", NAT_CHAIN], capture_output=True, text=True, check=False)
        for line in res.stdout.splitlines():
            parts = line.split()
            if f"{floating}/32" in parts and "--to-destination" in parts:
                return parts[parts.index("--to-destination") + 1]
        return None

    def add_bridge_address(self, cidr: str) -> None:
        """Give the root namespace's side of the bridge one more address ("ADDR/PREFIX"), so the
        tests reach hosts on another subnet (removed with the bridge)."""
        _ip_batch([f"addr replace {cidr} dev {BRIDGE}"])

    def _launch(self, hosts: list[TestHost]) -> None:
        env = dict(os.environ, VNFM_ITEST_STATE_DIRS="\n".join(BOUND_STATE_DIRS),
                   VNFM_ITEST_EXPOSE="\n".join(exposed_paths()))
        for h in hosts:
            with open(h.dir / "console.log", "ab") as log:
                h.proc = subprocess.Popen(
                    [
                        "nsenter", f"--net=/run/netns/{h.name}",
                        "unshare", "--mount", "--uts", "--pid", "--kill-child", "--propagation", "private",
                        str(HOSTINIT), str(h.dir), h.name,
                        ",".join(f"{a}/24" for a in (h.address, *h.extra_addresses)),
                    ],
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            (h.dir / "launcher.pid").write_text(str(h.proc.pid))

    def _wait_ready(self, hosts: list[TestHost]) -> None:
        pending = list(hosts)
        end = time.monotonic() + START_DEADLINE
        delay = 0.005
        while pending:
            for h in list(pending):
                if h.proc is not None and h.proc.poll() is not None:
                    raise RuntimeError(f"test host {h.name} exited ({h.proc.returncode}):\n{h.console()}")
                if h.proc is not None and _listening(h.proc.pid, 22):
                    pending.remove(h)
            if not pending:
                self._announce(hosts)
                return
            if time.monotonic() > end:
                raise RuntimeError(
                    f"sshd did not come up on {[h.name for h in pending]}:\n{pending[0].console()}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    @staticmethod
    def _announce(hosts: list[TestHost]) -> None:
        """What a booting VM's gratuitous ARP does: the root namespace learns each host's MAC now,
        so an address a removed host had (and a failed lookup cached for it) is not in the way."""
        lines = []
        for h in hosts:
            res = subprocess.run(["ip", "-n", h.name, "-j", "link", "show", "eth0"], capture_output=True,
                                 text=True, check=True)
            mac = json.loads(res.stdout)[0]["address"]
            lines += [f"neigh replace {a} lladdr {mac} dev {BRIDGE} nud stale"
                      for a in (h.address, *h.extra_addresses)]
        _ip_batch(lines)

    def stop_hosts(self, hosts: list[TestHost]) -> None:
        """Kill every process of the hosts (their layers stay)."""
        for h in hosts:
            if h.proc is not None and h.proc.poll() is None:
                h.proc.kill()  # unshare --kill-child takes the host's PID 1, the pid ns follows
        for h in hosts:
            if h.proc is not None:
                h.proc.wait(10)
        _kill_netns_processes(h.name for h in hosts)

    def destroy_hosts(self, hosts: list[TestHost]) -> None:
        """Stop the hosts and delete their namespaces and layers."""
        if not hosts:
            return
        try:
            self.stop_hosts(hosts)
        finally:
            lines = [f"link del v-{h.name}" for h in hosts if Path(f"/sys/class/net/v-{h.name}").exists()]
            lines += [f"netns del {h.name}" for h in hosts if _netns_inode(h.name) is not None]
            # a later host may get the address (a cloud reuses it): forget this one's MAC
            lines += [f"neigh flush to {a} dev {BRIDGE}" for h in hosts for a in (h.address, *h.extra_addresses)]
            if lines:
                _ip_batch(lines, check=False)
            for h in hosts:
                shutil.rmtree(h.dir, ignore_errors=True)
                self._hosts.pop(h.index, None)
