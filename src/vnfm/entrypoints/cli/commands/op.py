"""`vnfm op ...`: operation occurrences (vnfLcmOpOcc): list, show/follow, and the resolutions of
a FAILED_TEMP one (retry, rollback, fail)."""

from __future__ import annotations

import click

from vnfm.entrypoints.cli.context import CliContext, filter_option, json_option, pass_cc
from vnfm.entrypoints.cli.lcm_task import Ends, follow_op, op_resolution, wait_options
from vnfm.entrypoints.cli.render import OP_COLUMNS, render_op
from vnfm.entrypoints.cli.wait import DEFAULT_TIMEOUT


@click.group()
def op() -> None:
    """Operation occurrences: show, follow, retry, roll back.

    Each instantiate/scale/heal/terminate creates one; a failed one stays FAILED_TEMP until resolved.

    \b
    Example:
      vnfm op list
      vnfm op retry OP_ID --wait      # or: rollback / fail
    """


@op.command("list")
@filter_option("(eq,operationState,FAILED_TEMP)")
@json_option
@pass_cc
def op_list(cc: CliContext, filter_: str | None) -> None:
    """List operation occurrences.

    \b
    Example:
      vnfm op list --filter '(eq,operationState,FAILED_TEMP)'
    """
    cc.emit(cc.client.list_ops(filter_), columns=OP_COLUMNS)


@op.command("show")
@click.argument("op_id")
@wait_options
@json_option
@pass_cc
def op_show(cc: CliContext, op_id: str, wait: bool, timeout: float) -> None:
    """Show an operation occurrence (with --wait: follow it until it ends).

    \b
    Example:
      vnfm op show OP_ID --wait
    """
    if wait:
        follow_op(cc, op_id, timeout)
        return
    cc.emit(cc.client.get_op(op_id), render_op)


@op.command("watch")
@click.argument("op_id")
@click.option("--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Give up watching after this long (the operation goes on in the server).")
@json_option
@pass_cc
def op_watch(cc: CliContext, op_id: str, timeout: float) -> None:
    """Follow an operation occurrence until it ends: its state changes and progress lines, the ones
    already logged first (the same as `vnfm op show OP_ID --wait`).

    \b
    Example:
      vnfm op watch OP_ID
    """
    follow_op(cc, op_id, timeout)


@op.command("cancel")
@click.argument("op_id")
@click.option("--mode", type=click.Choice(["GRACEFUL", "FORCEFUL"], case_sensitive=False), default="GRACEFUL",
              show_default=True, help="GRACEFUL: stop before the next stage; FORCEFUL: stop at once.")
@json_option
@pass_cc
def op_cancel(cc: CliContext, op_id: str, mode: str) -> None:
    """Cancel a running (STARTING / PROCESSING / ROLLING_BACK) operation; it ends FAILED_TEMP, to be
    retried, rolled back or failed.

    \b
    Example:
      vnfm op cancel OP_ID --mode FORCEFUL
    """
    cc.client.op_action(op_id, "cancel", {"cancelMode": mode.upper()})
    cc.echo_result(
        {"vnfLcmOpOccId": op_id, "cancelMode": mode.upper()},
        f"Cancel ({mode.upper()}) of vnfLcmOpOcc {op_id} requested; follow it with `vnfm op watch {op_id}`",
    )


@op.command("retry")
@click.argument("op_id")
@op_resolution("retry")
def op_retry() -> Ends:
    """Retry a FAILED_TEMP operation from where it stopped.

    \b
    Example:
      vnfm op retry OP_ID --wait
    """
    return Ends()


@op.command("rollback")
@click.argument("op_id")
@op_resolution("rollback")
def op_rollback() -> Ends:
    """Roll back a FAILED_TEMP instantiate or scale-out (ends ROLLED_BACK).

    \b
    Example:
      vnfm op rollback OP_ID --wait
    """
    return Ends(success=frozenset({"ROLLED_BACK"}), failure=frozenset({"FAILED_TEMP", "FAILED"}))


@op.command("fail")
@click.argument("op_id")
@op_resolution("fail")
def op_fail() -> Ends:
    """Mark a FAILED_TEMP operation as FAILED (gives up on it; the instance is unlocked).

    \b
    Example:
      vnfm op fail OP_ID
    """
    return Ends(success=frozenset({"FAILED"}), failure=frozenset())
