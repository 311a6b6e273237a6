"""What the SSH handlers of every step family share: the script texts, their output format, the
handler signature, file uploads."""

from __future__ import annotations

import re
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


_INCLUDE = re.compile(r"^# @include ([a-z_]+)$", re.M)


@cache
def script_text(name: str) -> str:
    """Script `name`, each `# @include LIB` line replaced by scripts/lib/LIB.sh (shell functions
    several scripts share: the text travels whole on stdin, nothing is sourced on the host)."""
    text = resources.files("vnfm.adapters.nodes.ssh").joinpath("scripts", f"{name}.sh").read_text()
    return _INCLUDE.sub(lambda m: _lib(m.group(1)), text)


def _lib(name: str) -> str:
    text = resources.files("vnfm.adapters.nodes.ssh").joinpath("scripts", "lib", f"{name}.sh").read_text()
    return "\n".join(line for line in text.splitlines() if not line.startswith("#!"))


def parse_output(stdout: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        if line.startswith("@@ ") and "=" in line:
            k, _, v = line[3:].partition("=")
            out[k.strip()] = v
    return out


def changed(out: Mapping[str, str]) -> bool:
    return out.get("changed") == "true"
