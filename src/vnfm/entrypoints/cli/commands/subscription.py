"""`vnfm subscription ...`: notification subscriptions, LCM (SOL003) or with --packages SOL005."""

from __future__ import annotations

from pathlib import Path

import click

from vnfm.entrypoints.cli.context import CliContext, json_option, pass_cc
from vnfm.entrypoints.cli.files import load_json_object
from vnfm.entrypoints.cli.output import render_fields
from vnfm.entrypoints.cli.render import SUB_COLUMNS


@click.group()
def subscription() -> None:
    """Notification subscriptions: LCM (SOL003), or packages (SOL005) with --packages.

    The server POSTs VnfLcmOperationOccurrenceNotification etc. to each callback URI; with
    --packages, VnfPackageOnboardingNotification and VnfPackageChangeNotification.

    \b
    Examples:
      vnfm subscription create http://127.0.0.1:8000/notify --filter-file filter.json
      vnfm subscription create http://127.0.0.1:8000/pkg --packages
      vnfm subscription list --packages
    """


packages_option = click.option(
    "--packages", is_flag=True, default=False,
    help="SOL005 package-management subscriptions (/vnfpkgm/v1) instead of LCM ones.",
)


@subscription.command("create")
@click.argument("callback")
@click.option(
    "--filter-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help='JSON filter: LccnSubscriptionRequest.filter, or with --packages a PkgmNotificationsFilter, '
         'e.g. {"notificationTypes": [...]}.',
)
@packages_option
@json_option
@pass_cc
def subscription_create(cc: CliContext, callback: str, filter_file: Path | None, packages: bool) -> None:
    """Subscribe a callback URI to notifications (the server checks it answers GET 204).

    \b
    Examples:
      vnfm subscription create http://127.0.0.1:8000/notify
      vnfm subscription create http://127.0.0.1:8000/pkg --packages
    """
    flt = load_json_object(filter_file, "--filter-file")
    cc.emit(cc.client.create_subscription(callback, flt, packages=packages), render_fields)


@subscription.command("list")
@packages_option
@json_option
@pass_cc
def subscription_list(cc: CliContext, packages: bool) -> None:
    """List subscriptions.

    \b
    Examples:
      vnfm subscription list --json
      vnfm subscription list --packages
    """
    cc.emit(cc.client.list_subscriptions(packages=packages), columns=SUB_COLUMNS)


@subscription.command("show")
@click.argument("sub_id")
@packages_option
@json_option
@pass_cc
def subscription_show(cc: CliContext, sub_id: str, packages: bool) -> None:
    """Show one subscription.

    \b
    Example:
      vnfm subscription show SUB_ID
    """
    cc.emit(cc.client.get_subscription(sub_id, packages=packages), render_fields)


@subscription.command("delete")
@click.argument("sub_id")
@packages_option
@pass_cc
def subscription_delete(cc: CliContext, sub_id: str, packages: bool) -> None:
    """Delete a subscription.

    \b
    Example:
      vnfm subscription delete SUB_ID
    """
    cc.client.delete_subscription(sub_id, packages=packages)
    cc.info(f"Subscription {sub_id} deleted")
