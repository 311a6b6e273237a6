"""`vnfm package ...`: VNF packages (SOL005 /vnfpkgm/v1)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from vnfm.entrypoints.cli.client import ApiError
from vnfm.entrypoints.cli.context import CliContext, filter_option, json_option, pass_cc
from vnfm.entrypoints.cli.files import csar_bytes, file_option
from vnfm.entrypoints.cli.output import render_fields
from vnfm.entrypoints.cli.render import PACKAGE_COLUMNS, render_package


@click.group()
def package() -> None:
    """VNF packages (SOL005): onboard, enable, delete.

    The SOL005 /vnfpkgm/v1 API: create, upload, list, show, enable, disable, delete, vnfd.

    \b
    Example (onboard a CSAR, then use its vnfdId for `vnfm vnf create`):
      vnfm package create
      vnfm package upload PKG_ID ./my_package.zip
      vnfm package show PKG_ID
    """


@package.command("create")
@click.option(
    "--user-data", "user_data", multiple=True, metavar="KEY=VALUE", help="userDefinedData entry (repeatable)."
)
@json_option
@pass_cc
def package_create(cc: CliContext, user_data: tuple[str, ...]) -> None:
    """Create an empty VNF package resource (then `upload` its content).

    \b
    Example:
      vnfm package create --user-data owner=alice
    """
    data: dict[str, str] = {}
    for item in user_data:
        if "=" not in item:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--user-data")
        k, v = item.split("=", 1)
        data[k] = v
    pkg = cc.client.create_package(data or None)
    cc.emit(pkg, render_fields)


@package.command("upload")
@click.argument("pkg_id")
@click.argument("path", type=click.Path(exists=True, path_type=Path), required=False)
@click.option("--url", default=None, metavar="URL",
              help="Instead of PATH: the server fetches the CSAR from this http(s) URL (upload_from_uri).")
@click.option("--user-name", default=None, metavar="USER",
              help="With --url: BASIC authentication user; the password is read from "
                   "VNFM_PACKAGE_PASSWORD or asked for (never on the command line).")
@click.option("--wait/--no-wait", default=True, show_default=True, help="Wait until onboarding ends.")
@click.option("--long", "long_", is_flag=True, help="Show every software image and artifact with its checksum.")
@click.option(
    "--timeout",
    type=float,
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="With --wait: give up after this long.",
)
@json_option
@pass_cc
def package_upload(cc: CliContext, pkg_id: str, path: Path | None, url: str | None, user_name: str | None,
                   wait: bool, long_: bool, timeout: float) -> None:
    """Upload a CSAR zip (or a package directory, zipped for you) as the package's content, or
    have the server fetch it from a URL.

    \b
    Examples:
      vnfm package upload PKG_ID ./sample_kubernetes.zip
      vnfm package upload PKG_ID ./my_package_dir/
      VNFM_PACKAGE_PASSWORD=... vnfm package upload PKG_ID --url https://repo/k8s.zip --user-name nfvo
    """
    if (path is None) == (url is None):
        raise click.UsageError("give either PATH or --url")
    if url is not None:
        password = None
        if user_name:
            password = os.environ.get("VNFM_PACKAGE_PASSWORD") or click.prompt(
                f"Password for {user_name}", hide_input=True, err=True)
        cc.client.upload_package_from_uri(pkg_id, url, user_name, password)
        cc.info(f"Package {pkg_id}: content fetched by the server")
    else:
        assert path is not None
        data = csar_bytes(path)
        cc.client.upload_package(pkg_id, data)
        cc.info(f"Uploaded {len(data)} bytes to package {pkg_id}")
    if wait:
        _wait_onboarded(cc, pkg_id, timeout, long_)


def _wait_onboarded(cc: CliContext, pkg_id: str, timeout: float, long_: bool = False) -> None:
    """Poll the package (backoff from 0.05 s, capped at 1 s), printing its onboardingState changes,
    until it is ONBOARDED (then show it) or onboarding failed."""
    start = time.monotonic()
    delay, last = 0.05, None
    while True:
        pkg = cc.client.get_package(pkg_id)
        state = pkg.get("onboardingState")
        if state != last:
            cc.info(f"  {state}  {time.monotonic() - start:.1f}s")
            last = state
        if state == "ONBOARDED":
            cc.emit(pkg, lambda p: render_package(p, long=long_))
            return
        if state == "CREATED" or pkg.get("onboardingFailureDetails"):
            details = pkg.get("onboardingFailureDetails") or {}
            msg = details.get("detail") if isinstance(details, dict) else None
            raise click.ClickException(
                f"onboarding of package {pkg_id} failed: {msg or 'see the server log'}"
            )
        if time.monotonic() - start > timeout:
            raise click.ClickException(f"package {pkg_id} is still {state} after {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


@package.command("list")
@filter_option("(eq,operationalState,ENABLED)")
@json_option
@pass_cc
def package_list(cc: CliContext, filter_: str | None) -> None:
    """List VNF packages.

    \b
    Example:
      vnfm package list --filter '(eq,onboardingState,ONBOARDED)'
    """
    cc.emit(cc.client.list_packages(filter_), columns=PACKAGE_COLUMNS)


@package.command("show")
@click.argument("pkg_id")
@click.option("--long", "long_", is_flag=True, help="Show every software image and artifact with its checksum.")
@json_option
@pass_cc
def package_show(cc: CliContext, pkg_id: str, long_: bool) -> None:
    """Show one VNF package (software images and artifacts counted; --long lists them).

    \b
    Example:
      vnfm package show PKG_ID
      vnfm package show PKG_ID --long
    """
    cc.emit(cc.client.get_package(pkg_id), lambda p: render_package(p, long=long_))


def _set_state(cc: CliContext, pkg_id: str, state: str) -> None:
    cc.echo_result(cc.client.set_package_state(pkg_id, state), f"Package {pkg_id} is {state}")


@package.command("enable")
@click.argument("pkg_id")
@json_option
@pass_cc
def package_enable(cc: CliContext, pkg_id: str) -> None:
    """Enable a package (operationalState ENABLED): VNF instances can be created from it.

    \b
    Example:
      vnfm package enable PKG_ID
    """
    _set_state(cc, pkg_id, "ENABLED")


@package.command("disable")
@click.argument("pkg_id")
@json_option
@pass_cc
def package_disable(cc: CliContext, pkg_id: str) -> None:
    """Disable a package (operationalState DISABLED): needed before `delete`.

    \b
    Example:
      vnfm package disable PKG_ID
    """
    _set_state(cc, pkg_id, "DISABLED")


@package.command("delete")
@click.argument("pkg_id")
@pass_cc
def package_delete(cc: CliContext, pkg_id: str) -> None:
    """Delete a package (it must be DISABLED and NOT_IN_USE, or not yet onboarded).

    \b
    Example:
      vnfm package disable PKG_ID && vnfm package delete PKG_ID
    """
    cc.client.delete_package(pkg_id)
    cc.info(f"Package {pkg_id} deleted")


@package.command("vnfd")
@click.argument("pkg_id")
@file_option("Write to this file (needed when the VNFD has several files: a zip).")
@click.option("--zip", "zip_", is_flag=True, help="Ask for the zip of all VNFD files.")
@pass_cc
def package_vnfd(cc: CliContext, pkg_id: str, file: Path | None, zip_: bool) -> None:
    """Fetch the VNFD of an onboarded package (YAML text, or a zip with --zip).

    \b
    Example:
      vnfm package vnfd PKG_ID
      vnfm package vnfd PKG_ID --zip --file vnfd.zip
    """
    output = file
    want_zip = zip_ or (output is not None and output.suffix.lower() == ".zip")
    try:
        content_type, data = cc.client.get_vnfd(pkg_id, zip_=want_zip)
    except ApiError as e:
        # text/plain works only for a one-file VNFD (406 per SOL005; some servers say 409)
        if want_zip or e.status not in (406, 409):
            raise
        if output is None:
            raise click.ClickException(
                f"the VNFD of package {pkg_id} has several files: "
                f"fetch them as a zip with `vnfm package vnfd {pkg_id} --zip --file vnfd.zip`"
            ) from None
        content_type, data = cc.client.get_vnfd(pkg_id, zip_=True)
    if output is not None:
        output.write_bytes(data)
        cc.info(f"Wrote {len(data)} bytes ({content_type or 'unknown type'}) to {output}")
        return
    if "zip" in content_type or data[:2] == b"PK":
        raise click.ClickException("the VNFD is a zip (several files): give --file FILE.zip")
    click.echo(data.decode("utf-8", errors="replace"), nl=False)
