"""What the SSH handlers of every step family share: the script texts, their output format, the
handler signature, file uploads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any, Protocol

from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import NodeStep, StepResult


class ScriptRunner(Protocol):
    """What a handler may ask of the executor: run one of ./scripts on the target."""

    async def script(self, target: SshTarget, step: NodeStep, name: str, inputs: Mapping[str, str],
                     secrets: Mapping[str, str] | None = None, timeout: float | None = None) -> dict[str, str]: ...

    async def upload(self, target: SshTarget, step: NodeStep, local_path: str, remote_path: str,
                     timeout: float | None = None) -> None:
        """Copy a local file to the target over SFTP (a relative `remote_path` is under the home)."""
        ...


Handler = Callable[[ScriptRunner, SshTarget, Any], Awaitable[StepResult]]


@cache
def script_text(name: str) -> str:
    return resources.files("vnfm.adapters.nodes.ssh").joinpath("scripts", f"{name}.sh").read_text()


def parse_output(stdout: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        if line.startswith("@@ ") and "=" in line:
            k, _, v = line[3:].partition("=")
            out[k.strip()] = v
    return out


def changed(out: Mapping[str, str]) -> bool:
    return out.get("changed") == "true"
