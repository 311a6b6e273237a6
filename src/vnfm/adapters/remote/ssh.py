"""Async SSH executor (asyncssh) used by management drivers to run steps on VNFC hosts.

* One connection per (host, port, username) is opened lazily and reused; a lost connection is
  reopened once, transparently, on the next command (never a command that had started: it may
  have had side effects).
* A semaphore bounds the number of commands in flight (channels) across all hosts.
* Host keys are pinned: the first contact with a host whose `SshTarget.known_host_key` is None
  records the key it presented (returned by `connect`, reported to `on_host_key`, kept in
  `pinned_keys`); every later connection must present the same key, else `HostKeyChanged`.
  `repin` forgets (or replaces) the pin, for a healed VNFC that legitimately has a new key.
  The check runs during the key exchange, before any credential is sent.
* Secrets (passwords, private keys, `env_secrets`) never appear in logs, exception messages
  or command lines: `run_script` passes them on the remote shell's stdin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shlex
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import asyncssh

from vnfm import nodesteps
from vnfm.domain.errors import OperationFailed

log = logging.getLogger(__name__)

T = TypeVar("T")

_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CMD_SHOWN = 120  # characters of a command quoted in errors


# ============================================================================= errors
class RemoteError(OperationFailed):
    """A remote step could not be run. Messages name host and command, never secrets."""


class SshConnectError(RemoteError):
    pass


class SshAuthError(RemoteError):
    pass


class SshTimeout(RemoteError):
    pass


class HostKeyChanged(RemoteError, nodesteps.HostKeyChanged):
    def __init__(self, host: str, port: int, expected: str, got: str) -> None:
        super().__init__(
            f"host key of {host}:{port} changed: expected {expected}, got {got}; refusing to connect "
            "(if this VNFC was legitimately rebuilt, re-pin its key)",
            host=host,
            expected_fingerprint=expected,
            got_fingerprint=got,
        )
        self.host = host
        self.port = port
        self.expected = expected
        self.got = got


class RemoteCommandFailed(RemoteError):
    def __init__(self, host: str, command: str, result: Result) -> None:
        tail = "\n".join(result.stderr.strip().splitlines()[-15:])
        super().__init__(f"{command} on {host} exited with {result.exit_status}: {tail}")
        self.host = host
        self.result = result


# ============================================================================= data
@dataclass(frozen=True)
class SshTarget:
    """How to reach one host. `private_key` is an OpenSSH/PEM private key text (or bytes)."""

    host: str
    port: int = 22
    username: str = field(kw_only=True)
    password: str | None = field(default=None, kw_only=True, repr=False)
    private_key: str | bytes | None = field(default=None, kw_only=True, repr=False)
    known_host_key: str | None = field(default=None, kw_only=True)  # "ssh-ed25519 AAAA..." to pin
    # Run commands as root through `sudo -n` (a non-root login such as a cloud image's `ubuntu`,
    # which may sudo without a password); never with a password on any command line.
    become: bool = field(default=False, kw_only=True)

    def as_root(self, command: str) -> str:
        """`command` (one shell command line) as the target runs it: through `sudo -n` when it
        becomes root (the login shell fills in VNFM_LOGIN_HOME / VNFM_LOGIN_USER, so that a script
        can still reach the login user's own files: its authorized_keys, a file copied over SFTP
        into its home), unchanged otherwise."""
        if not self.become:
            return command
        return ('sudo -n -- env "VNFM_LOGIN_HOME=$HOME" "VNFM_LOGIN_USER=$(id -un)" '
                + shlex.join(["sh", "-c", command]))

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.host, self.port, self.username)

    def __str__(self) -> str:
        return f"{self.username}@{self.host}:{self.port}"


@dataclass(frozen=True)
class Result:
    exit_status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


def fingerprint(public_key: str) -> str:
    """SHA256 fingerprint (as `ssh-keygen -l` prints it) of an OpenSSH public key line."""
    return str(asyncssh.import_public_key(public_key).get_fingerprint("sha256"))


def describe(command: Sequence[str] | str) -> str:
    """A short, loggable form of a command. Commands never carry secrets (they go on stdin)."""
    text = command if isinstance(command, str) else shlex.join(command)
    text = " ".join(text.split())
    return text if len(text) <= _CMD_SHOWN else text[: _CMD_SHOWN - 3] + "..."


def script_payload(
    script_text: str,
    env_secrets: Mapping[str, str] | None = None,
    stdin_vars: Mapping[str, str] | None = None,
) -> str:
    """What `run_script` feeds to `bash -s`: variable assignments, then the script in a brace
    group. The group is parsed completely before it runs, so nothing in the script can read
    the rest of the payload; its stdin is /dev/null."""
    lines: list[str] = []
    for prefix, mapping in (("export ", env_secrets or {}), ("", stdin_vars or {})):
        for k, v in mapping.items():
            if not _VAR_NAME.match(k):
                raise ValueError(f"invalid variable name {k!r}")
            lines.append(f"{prefix}{k}={shlex.quote(v)}")
    return "\n".join(lines) + "\n{\n" + script_text.rstrip("\n") + "\n} </dev/null\n"


# ============================================================================= connection plumbing
class _PinningClient(asyncssh.SSHClient):
    """Checks the server host key against the pin during key exchange (before authentication)."""

    def __init__(self, pinned: asyncssh.SSHKey | None) -> None:
        self.pinned = pinned
        self.seen: asyncssh.SSHKey | None = None
        self.lost = False

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        self.seen = key
        if self.pinned is None:
            return True  # first contact: trust on first use, the executor records the key
        return bool(key.public_data == self.pinned.public_data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


@dataclass
class _Conn:
    conn: asyncssh.SSHClientConnection
    client: _PinningClient

    @property
    def usable(self) -> bool:
        return not self.client.lost and not self.conn.is_closed()


def _export_key(key: asyncssh.SSHKey) -> str:
    return bytes(key.export_public_key("openssh")).decode().strip()


# ============================================================================= executor
class SshExecutor:
    """Runs commands on many hosts over reused SSH connections. Use as an async context manager
    (or call `close`)."""

    def __init__(
        self,
        max_parallel: int = 32,
        max_sessions_per_host: int = 8,
        connect_timeout: float = 15.0,
        command_timeout: float = 300.0,
        on_host_key: Callable[[SshTarget, str], None] | None = None,
    ) -> None:
        self._sem = asyncio.Semaphore(max_parallel)
        self._per_host = max_sessions_per_host  # below sshd's MaxSessions (default 10)
        self._host_sems: dict[tuple[str, int, str], asyncio.Semaphore] = {}
        self._connect_timeout = connect_timeout
        self._command_timeout = command_timeout
        self._on_host_key = on_host_key
        self._conns: dict[tuple[str, int, str], _Conn] = {}
        self._locks: dict[tuple[str, int, str], asyncio.Lock] = {}
        #: (host, port) -> OpenSSH public key line; filled on first contact, checked afterwards.
        self.pinned_keys: dict[tuple[str, int], str] = {}

    async def __aenter__(self) -> SshExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        conns = list(self._conns.values())
        self._conns.clear()
        for c in conns:
            c.conn.close()
        for c in conns:
            with contextlib.suppress(TimeoutError, OSError, asyncssh.Error):
                await asyncio.wait_for(c.conn.wait_closed(), 5)

    # ------------------------------------------------------------------ host keys
    def repin(self, target: SshTarget, new_key: str | None = None) -> None:
        """Forget the pinned key of `target` (the next contact records a new one), or pin `new_key`.
        Closes the current connection to that host. Note: a `known_host_key` on the target itself
        still wins; pass an updated target after a heal."""
        hp = (target.host, target.port)
        if new_key is None:
            self.pinned_keys.pop(hp, None)
        else:
            asyncssh.import_public_key(new_key)  # validate
            self.pinned_keys[hp] = new_key.strip()
        for k in [k for k in self._conns if (k[0], k[1]) == hp]:
            self._conns.pop(k).conn.close()

    def _pin_for(self, target: SshTarget) -> str | None:
        return target.known_host_key or self.pinned_keys.get((target.host, target.port))

    async def connect(self, target: SshTarget) -> str:
        """Open (or reuse) the connection and return the host key (OpenSSH public key line)."""
        c = await self._get(target)
        key = c.conn.get_server_host_key()
        assert key is not None
        return _export_key(key)

    async def _get(self, target: SshTarget) -> _Conn:
        k = target.key
        c = self._conns.get(k)
        if c is not None and c.usable:
            return c
        lock = self._locks.setdefault(k, asyncio.Lock())
        async with lock:
            c = self._conns.get(k)
            if c is not None and c.usable:
                return c
            c = await self._open(target)
            self._conns[k] = c
            return c

    async def _open(self, target: SshTarget) -> _Conn:
        pin_text = self._pin_for(target)
        pinned = asyncssh.import_public_key(pin_text) if pin_text else None
        client = _PinningClient(pinned)
        opts: dict[str, Any] = {
            "port": target.port,
            "username": target.username,
            # an explicit, empty known_hosts: every key goes through validate_host_public_key
            "known_hosts": ([], [], []),
            "config": None,
            "agent_path": None,
            "connect_timeout": self._connect_timeout,
            "login_timeout": self._connect_timeout,
        }
        if pinned is not None:
            # negotiate the pinned key's type, so a host with several keys shows the pinned one
            opts["server_host_key_algs"] = [a.decode() for a in pinned.sig_algorithms]
        if target.private_key is not None:
            try:
                opts["client_keys"] = [asyncssh.import_private_key(target.private_key)]
            except asyncssh.KeyImportError:
                raise SshAuthError(f"private key for {target} could not be read") from None
        else:
            opts["client_keys"] = None
        if target.password is not None:
            opts["password"] = target.password
        else:
            opts["password"] = None
            opts["kbdint_auth"] = False
        try:
            conn, _ = await asyncssh.create_connection(lambda: client, target.host, **opts)
        except asyncssh.HostKeyNotVerifiable:
            if client.seen is not None and pinned is not None:
                raise HostKeyChanged(
                    target.host,
                    target.port,
                    str(pinned.get_fingerprint("sha256")),
                    str(client.seen.get_fingerprint("sha256")),
                ) from None
            raise SshConnectError(f"host key of {target} could not be verified") from None
        except asyncssh.PermissionDenied:
            raise SshAuthError(f"authentication as {target.username} on {target.host} failed") from None
        except TimeoutError:
            raise SshTimeout(
                f"connecting to {target} timed out after {self._connect_timeout:g}s"
            ) from None
        except (OSError, asyncssh.Error) as e:
            raise SshConnectError(f"cannot connect to {target}: {type(e).__name__}: {e}") from None
        key = conn.get_server_host_key()
        assert key is not None
        hp = (target.host, target.port)
        if pinned is None:
            text = _export_key(key)
            self.pinned_keys[hp] = text
            log.info("pinned host key of %s:%s (%s)", target.host, target.port, key.get_fingerprint("sha256"))
            if self._on_host_key is not None:
                self._on_host_key(target, text)
        return _Conn(conn, client)

    # ------------------------------------------------------------------ commands
    async def run(
        self,
        target: SshTarget,
        command: Sequence[str] | str,
        stdin: bytes | str | None = None,
        timeout: float | None = None,
        check: bool = False,
    ) -> Result:
        """Run `command` (a list is shell-quoted; a string goes to the login shell as is).
        `stdin` is fed to the command and closed. Raises SshTimeout after `timeout` seconds."""
        text = command if isinstance(command, str) else shlex.join(command)
        shown = describe(command)
        raw = await self._exec(target, target.as_root(text), stdin, timeout, shown)
        res = Result(
            raw.exit_status,
            raw.stdout.decode("utf-8", "replace"),
            raw.stderr.decode("utf-8", "replace"),
        )
        if check and not res.ok:
            raise RemoteCommandFailed(target.host, shown, res)
        return res

    async def _exec(
        self,
        target: SshTarget,
        command: str,
        stdin: bytes | str | None,
        timeout: float | None,
        shown: str,
    ) -> _RawResult:
        limit = self._command_timeout if timeout is None else timeout
        data = stdin.encode() if isinstance(stdin, str) else stdin
        host_sem = self._host_sems.setdefault(target.key, asyncio.Semaphore(self._per_host))
        async with self._sem, host_sem:
            loop = asyncio.get_running_loop()
            end = loop.time() + limit
            for attempt in (1, 2):
                c = await self._get(target)
                log.debug("ssh %s: %s", target.host, shown)
                started = False
                try:
                    async with asyncio.timeout_at(end):
                        process = await c.conn.create_process(
                            command, input=data if data is not None else b"", encoding=None
                        )
                        started = True
                        proc = await process.wait(check=False)
                except TimeoutError:
                    raise SshTimeout(f"{shown} on {target.host} timed out after {limit:g}s") from None
                except (asyncssh.ConnectionLost, asyncssh.ChannelOpenError, BrokenPipeError,
                        ConnectionResetError) as e:
                    dead = not c.usable or isinstance(e, asyncssh.ConnectionLost)
                    if dead and self._conns.get(target.key) is c:
                        self._conns.pop(target.key, None)
                    # a dead cached connection (host rebooted) is reopened once, but only when the
                    # command never started: one that did may have had side effects (kubeadm join)
                    if attempt == 2 or not dead or started:
                        raise SshConnectError(
                            f"connection to {target} lost while running {shown}: {type(e).__name__}"
                        ) from None
                    continue
                status = proc.exit_status
                if status is None or status < 0:  # killed by a signal
                    status = 255
                out = proc.stdout if isinstance(proc.stdout, bytes) else b""
                err = proc.stderr if isinstance(proc.stderr, bytes) else b""
                return _RawResult(status, out, err)
        raise AssertionError("unreachable")

    async def put_file(
        self, target: SshTarget, path: str, data: bytes | str, mode: int = 0o600, timeout: float | None = None
    ) -> None:
        """Write `data` to `path` atomically (temp file in the same directory, then rename),
        creating the parent directory. The content travels on stdin."""
        script = (
            "set -eu; umask 077; p=$1; d=$(dirname -- \"$p\"); mkdir -p -- \"$d\"; "
            "t=$(mktemp \"$d/.vnfm-put.XXXXXX\"); trap 'rm -f -- \"$t\"' EXIT; "
            "cat > \"$t\"; chmod \"$2\" \"$t\"; mv -f -- \"$t\" \"$p\"; trap - EXIT"
        )
        cmd = target.as_root(shlex.join(["sh", "-c", script, "put", path, format(mode, "o")]))
        shown = f"put_file {path}"
        raw = await self._exec(target, cmd, data, timeout, shown)
        if raw.exit_status != 0:
            res = Result(raw.exit_status, "", raw.stderr.decode("utf-8", "replace"))
            raise RemoteCommandFailed(target.host, shown, res)

    async def upload(self, target: SshTarget, local_path: str, remote_path: str, mode: int = 0o600,
                     timeout: float | None = None) -> None:
        """Copy the local file `local_path` to `remote_path` over SFTP (a relative path is under the
        login's home), creating its directory: written beside it under a temporary name, then
        renamed, so a half-copied file never has the final name. For large files (images)."""
        limit = self._command_timeout if timeout is None else timeout
        shown = f"upload {remote_path}"
        async with self._sem, self._host_sems.setdefault(target.key, asyncio.Semaphore(self._per_host)):
            c = await self._get(target)
            tmp = f"{remote_path}.vnfm-part"
            try:
                async with asyncio.timeout(limit), c.conn.start_sftp_client() as sftp:
                    if "/" in remote_path.strip("/"):
                        await sftp.makedirs(remote_path.rsplit("/", 1)[0], exist_ok=True)
                    await sftp.put(local_path, tmp)
                    await sftp.chmod(tmp, mode)
                    await sftp.posix_rename(tmp, remote_path)
            except TimeoutError:
                raise SshTimeout(f"{shown} on {target.host} timed out after {limit:g}s") from None
            except (OSError, asyncssh.Error) as e:
                raise RemoteError(f"{shown} on {target.host} failed: {type(e).__name__}: {e}") from None

    async def get_file(self, target: SshTarget, path: str, timeout: float | None = None) -> bytes:
        shown = f"get_file {path}"
        raw = await self._exec(target, target.as_root(shlex.join(["cat", "--", path])), None, timeout, shown)
        if raw.exit_status != 0:
            res = Result(raw.exit_status, "", raw.stderr.decode("utf-8", "replace"))
            raise RemoteCommandFailed(target.host, shown, res)
        return raw.stdout

    async def run_script(
        self,
        target: SshTarget,
        script_text: str,
        args: Iterable[str] = (),
        env_secrets: Mapping[str, str] | None = None,
        stdin_vars: Mapping[str, str] | None = None,
        timeout: float | None = None,
        name: str = "script",
        check: bool = False,
    ) -> Result:
        """Run a bash script with positional `args`.

        The script text and the variables travel on stdin (`bash -s`), never on the command
        line: `env_secrets` become exported environment variables of the script (so tools like
        etcdctl can read them), `stdin_vars` plain shell variables (bulky inputs such as a config
        file). The script's own stdin is /dev/null. Only `name` appears in logs and errors.
        """
        payload = script_payload(script_text, env_secrets, stdin_vars)
        cmd = target.as_root(shlex.join(["bash", "-s", "--", *args]))
        shown = f"{name} {describe(list(args))}".strip()
        raw = await self._exec(target, cmd, payload, timeout, shown)
        res = Result(
            raw.exit_status, raw.stdout.decode("utf-8", "replace"), raw.stderr.decode("utf-8", "replace")
        )
        if check and not res.ok:
            raise RemoteCommandFailed(target.host, shown, res)
        return res

    async def fan_out(
        self,
        targets: Iterable[SshTarget],
        fn: Callable[[SshTarget], Awaitable[T]],
        return_exceptions: bool = False,
    ) -> list[Any]:
        """Run `fn(target)` for every target in parallel (commands bounded by the semaphore);
        results in the order of `targets`. With `return_exceptions`, failures are returned in
        place instead of raised (the first failure is raised otherwise, after all finished)."""
        results = await asyncio.gather(*(fn(t) for t in targets), return_exceptions=True)
        if not return_exceptions:
            for r in results:
                if isinstance(r, BaseException):
                    raise r
        return list(results)


@dataclass(frozen=True)
class _RawResult:
    exit_status: int
    stdout: bytes
    stderr: bytes
