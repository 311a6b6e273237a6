"""What `--wait` shows while it follows an occurrence: its state changes and progress lines as they
arrive (plain lines, fit for logs and pipes), a one-line spinner with the state, elapsed time and
current stage when the output is a terminal, and at the end what the operator can do next.

Lines printed (the spinner line, on a terminal only, is erased before each and at the end):

      PROCESSING  0.4s
        12:00:03 instantiate_start: deploying 1 x masterNode, 2 x workerNode
        12:00:09 instantiate_end: kubeadm: master k8s-m1 initialised
      COMPLETED  41.2s
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import click

from vnfm.entrypoints.cli.output import mask_text
from vnfm.entrypoints.cli.wait import Observer
from vnfm.service.remedies import remedies

SPINNER = "|/-\\"


def _stream_is_tty(err: bool) -> bool:
    stream: TextIO = sys.stderr if err else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressView:
    """Prints what an Observer reports; `err`: to stderr (under --json stdout stays parseable)."""

    def __init__(self, err: bool, tty: bool | None = None) -> None:
        self.err = err
        self.tty = _stream_is_tty(err) if tty is None else tty
        self.frame = 0
        self.stage = ""
        self.state = ""
        self.status_shown = False

    def observer(self, last_seen: dict[str, Any] | None = None) -> Observer:
        return Observer(on_change=self.change, on_progress=self.line, on_poll=self.poll, last_seen=last_seen)

    def echo(self, text: str) -> None:
        self.clear()
        click.echo(text, err=self.err)

    def change(self, state: str, elapsed: float) -> None:
        self.state = state
        self.echo(f"  {state}  {elapsed:.1f}s")

    def line(self, event: dict[str, Any], _elapsed: float) -> None:
        stage = str(event.get("stage") or "")
        self.stage = stage or self.stage
        when = str(event.get("time") or "")
        clock = when[11:19] if len(when) >= 19 else when
        text = mask_text(str(event.get("message", "")))
        prefix = f"{stage}: " if stage and not text.startswith(f"{stage}:") else ""
        self.echo(f"    {clock} {prefix}{text}".rstrip())

    def poll(self, _op: dict[str, Any], elapsed: float) -> None:
        """On a terminal: redraw the spinner line (state, elapsed time, current stage)."""
        if not self.tty:
            return
        self.frame = (self.frame + 1) % len(SPINNER)
        stage = f"  {self.stage}" if self.stage else ""
        click.echo(f"\r\x1b[K{SPINNER[self.frame]} {self.state} {elapsed:.0f}s{stage}", err=self.err, nl=False)
        self.status_shown = True

    def clear(self) -> None:
        if self.status_shown:
            click.echo("\r\x1b[K", err=self.err, nl=False)
            self.status_shown = False


def next_steps(op: dict[str, Any]) -> list[str]:
    """What the operator can do about an occurrence that ended in `op`'s state, the likeliest first."""
    op_id = op.get("id", "OP_ID")
    found = remedies(op)
    if op.get("operationState") == "FAILED":
        return [f"{found[0].why}; see `vnfm vnf show {op.get('vnfInstanceId', 'VNF_ID')}` for what is left"]
    if not any(r.action for r in found):
        return [r.why for r in found]
    commands = {"retry": f"vnfm op retry {op_id} --wait", "rollback": f"vnfm op rollback {op_id} --wait",
                "fail": f"vnfm op fail {op_id}"}
    width = max(len(commands[r.action]) for r in found)
    return [f"{commands[r.action].ljust(width)}   {r.why}" + ("   <- suggested" if r.suggested else "")
            for r in found]


def interrupted_message(op_id: str) -> str:
    return (
        f"Interrupted: stopped following vnfLcmOpOcc {op_id}; the operation keeps running in the server.\n"
        f"Follow it again with `vnfm op watch {op_id}` (or `vnfm op show {op_id}`);"
        f" stop it with `vnfm op cancel {op_id}`."
    )
