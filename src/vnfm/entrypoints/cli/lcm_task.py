"""The "LCM task with --wait" shape, written once.

An LCM request (instantiate, scale, heal, terminate) and the resolution of a failed occurrence
(retry, rollback, fail) both start work in the server that an operation occurrence (vnfLcmOpOcc)
tracks. Without --wait the command says which occurrence it is and how to follow it; with --wait it
follows it, printing each state change with the elapsed time and the server's progress lines as
they arrive (progress.py), and exits 1 unless it ends well (EXIT_WAIT_TIMEOUT when it gave up
waiting). `-o FORMAT` / `-c NAME` select what is printed, e.g. `-o value -c vnfLcmOpOccId` prints
the occurrence id alone (without --wait) and `-o value -c operationState` its end state (with it).

    @vnf.command("scale")
    @click.argument("vnf_id")
    @click.option(...)                       # the request's own options
    @lcm_task("Scale")                       # adds --wait, --timeout, --json; reports or follows
    def vnf_scale(client: VnfmClient, vnf_id: str, ...) -> str:
        return client.scale(vnf_id, body)    # the occurrence id
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from vnfm.entrypoints.cli.context import CliContext, F, json_option, pass_cc
from vnfm.entrypoints.cli.output import mask_text
from vnfm.entrypoints.cli.progress import ProgressView, interrupted_message, next_steps
from vnfm.entrypoints.cli.wait import DEFAULT_TIMEOUT, FAILURE, SUCCESS, describe_error, progress_of, wait_for_op


@dataclass(frozen=True)
class Ends:
    """Where following an occurrence stops: a state in `success` (exit 0) or in `failure` (exit 1)."""

    success: frozenset[str] = SUCCESS
    failure: frozenset[str] = FAILURE


def wait_options(f: F) -> F:
    """--wait and --timeout SECONDS."""
    f = click.option(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help="With --wait: give up waiting after this long (the operation goes on in the server).",
    )(f)
    return click.option(
        "--wait",
        is_flag=True,
        help="Follow the operation occurrence, printing its state changes and progress, until it ends.",
    )(f)


def follow_op(
    cc: CliContext,
    op_id: str,
    timeout: float,
    *,
    ends: Ends = Ends(),
    stale_entered_time: str | None = None,
    last_seen: dict[str, Any] | None = None,
) -> None:
    """--wait: print state changes with elapsed time and the progress lines as they arrive; exit 1
    unless the occurrence succeeds (then: its error and what can be done next); Ctrl-C stops
    following (exit 130), not the operation."""
    cc.info(f"Waiting for vnfLcmOpOcc {op_id} (up to {timeout:g}s):")
    view = ProgressView(err=cc.json_out)
    try:
        result = wait_for_op(
            cc.client,
            op_id,
            timeout=timeout,
            success=ends.success,
            failure=ends.failure,
            stale_entered_time=stale_entered_time,
            observer=view.observer(last_seen),
        )
    except KeyboardInterrupt:
        view.clear()
        click.echo("\n" + interrupted_message(op_id), err=True)
        click.get_current_context().exit(130)
    finally:
        view.clear()
    if cc.json_out or cc.columns:
        cc.emit(result.op)
    operation = result.op.get("operation", "operation")
    if result.ok:
        cc.info(f"{operation} {result.state} in {result.elapsed:.1f}s")
        return
    detail = mask_text(describe_error(result.op)) or "no error details"
    click.echo(f"Error: {operation} {result.state} after {result.elapsed:.1f}s: {detail}", err=True)
    steps = next_steps(result.op)
    if steps:
        click.echo("What next:\n" + "\n".join(f"  {s}" for s in steps), err=True)
    click.get_current_context().exit(1)


def task_started(cc: CliContext, what: str, vnf_id: str, op_id: str, wait: bool, timeout: float) -> None:
    """Report the occurrence an LCM request started, or follow it (--wait)."""
    accepted = f"{what} request for VNF instance {vnf_id} accepted: vnfLcmOpOcc {op_id}"
    if wait:
        cc.info(accepted)
        follow_op(cc, op_id, timeout)
        return
    started = dict(zip(STARTED_FIELDS, (vnf_id, op_id), strict=True))
    report(cc, started, f"{accepted}\nFollow it with `vnfm op show {op_id}`, or add --wait next time.")


STARTED_FIELDS = ("vnfInstanceId", "vnfLcmOpOccId")


def check_columns(cc: CliContext, fields: tuple[str, ...]) -> None:
    """-c names only fields of what will be printed: refused before the request is sent."""
    unknown = [c for c in cc.columns if c.lower() not in {f.lower() for f in fields}]
    if unknown:
        raise click.UsageError(f"no field {', '.join(unknown)} (fields: {', '.join(fields)})")


def report(cc: CliContext, value: dict[str, Any], text: str) -> None:
    """What a task request answers without --wait: the sentence `text` for people, `value` in the
    format and with the fields -o / -c ask for."""
    if cc.format == "table" and not cc.columns:
        click.echo(text)
    else:
        cc.emit(value)


def lcm_task(what: str) -> Callable[[Callable[..., str]], Callable[..., None]]:
    """An LCM request on a VNF instance: the decorated function gets the client, the instance id and
    the command's own arguments and options, sends the request and returns the occurrence id;
    `what` names the request in what is printed ("Scale request for VNF instance ...")."""

    def decorate(send: Callable[..., str]) -> Callable[..., None]:
        @functools.wraps(send)
        def command(cc: CliContext, vnf_id: str, wait: bool, timeout: float, **request: Any) -> None:
            if not wait:
                check_columns(cc, STARTED_FIELDS)
            op_id = send(cc.client, vnf_id, **request)
            task_started(cc, what, vnf_id, op_id, wait, timeout)

        return wait_options(json_option(pass_cc(command)))

    return decorate


def resolve_op(cc: CliContext, op_id: str, action: str, ends: Ends, wait: bool, timeout: float) -> None:
    """Ask for `action` (retry, rollback, fail) on a FAILED_TEMP occurrence; with --wait follow it
    until it reaches one of `ends`. Its FAILED_TEMP from before the request is not taken as the end."""
    before = cc.client.get_op(op_id) if wait else None
    result = cc.client.op_action(op_id, action)
    if not wait:
        report(cc, result or {"vnfLcmOpOccId": op_id, "action": action},
               f"{action.capitalize()} of vnfLcmOpOcc {op_id} accepted")
        return
    stale = before.get("stateEnteredTime") if before else None
    seen = progress_of(before)[-1:] if before else []
    follow_op(cc, op_id, timeout, ends=ends, stale_entered_time=stale, last_seen=seen[0] if seen else None)


def op_resolution(action: str) -> Callable[[Callable[[], Ends]], Callable[..., None]]:
    """`vnfm op ACTION OP_ID [--wait]`: the decorated function gives the docstring (the command's
    help) and returns where following the occurrence stops after this action."""

    def decorate(ends_of: Callable[[], Ends]) -> Callable[..., None]:
        @functools.wraps(ends_of)
        def command(cc: CliContext, op_id: str, wait: bool, timeout: float) -> None:
            resolve_op(cc, op_id, action, ends_of(), wait, timeout)

        return wait_options(json_option(pass_cc(command)))

    return decorate
