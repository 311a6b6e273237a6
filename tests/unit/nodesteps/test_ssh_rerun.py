"""SshExecutor reopens a dead cached connection once, but never runs a command twice: one whose
channel was opened may have had side effects (a kubeadm join) before the connection dropped."""

from __future__ import annotations

from typing import Any

import asyncssh
import pytest

from vnfm.adapters.remote.ssh import SshConnectError, SshExecutor, SshTarget


class _Client:
    lost = False


class _Proc:
    def __init__(self, fail: bool) -> None:
        self.fail = fail

    async def wait(self, check: bool = False) -> Any:
        if self.fail:
            raise asyncssh.ConnectionLost("connection dropped")
        return type("Done", (), {"exit_status": 0, "stdout": b"ok\n", "stderr": b""})()


class _Conn:
    def __init__(self, log: list[str], open_fails: bool, wait_fails: bool) -> None:
        self.log, self.open_fails, self.wait_fails = log, open_fails, wait_fails
        self.client = _Client()
        self.conn = self

    @property
    def usable(self) -> bool:
        return True

    def is_closed(self) -> bool:
        return False

    async def create_process(self, command: str, **_: Any) -> _Proc:
        self.log.append("open")
        if self.open_fails:
            raise asyncssh.ConnectionLost("cached connection is dead")
        self.log.append("started")
        return _Proc(self.wait_fails)


def _executor(conns: list[_Conn]) -> SshExecutor:
    ex = SshExecutor()

    async def get(target: SshTarget) -> Any:
        return conns.pop(0)

    ex._get = get  # type: ignore[method-assign]
    return ex


T = SshTarget("10.0.0.1", username="u")


async def test_dead_connection_before_start_is_reopened_once() -> None:
    log: list[str] = []
    ex = _executor([_Conn(log, open_fails=True, wait_fails=False), _Conn(log, open_fails=False, wait_fails=False)])
    res = await ex.run(T, "true")
    assert res.ok and res.stdout == "ok\n"
    assert log == ["open", "open", "started"]


async def test_connection_lost_after_start_is_not_rerun() -> None:
    log: list[str] = []
    ex = _executor([_Conn(log, open_fails=False, wait_fails=True), _Conn(log, open_fails=False, wait_fails=False)])
    with pytest.raises(SshConnectError, match="lost while running"):
        await ex.run_script(T, "kubeadm join", name="kubeadm_join")
    assert log == ["open", "started"]  # the second connection was never used
