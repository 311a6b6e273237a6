"""`vnfm vim ...`: the VIMs to deploy on (vnfm's own /vnfm/v1/vims API)."""

from __future__ import annotations

from pathlib import Path

import click

from vnfm.entrypoints.cli.context import CliContext, json_option, pass_cc
from vnfm.entrypoints.cli.files import required_json_object
from vnfm.entrypoints.cli.output import render_fields
from vnfm.entrypoints.cli.render import VIM_COLUMNS


@click.group()
def vim() -> None:
    """VIMs to deploy on (the simulator is the default).

    Register an OpenStack VIM to deploy on a real cloud; requests name it in vimConnectionInfo.

    \b
    Example:
      vnfm vim register openstack-vim.json
      vnfm vim list
    """


@vim.command("list")
@json_option
@pass_cc
def vim_list(cc: CliContext) -> None:
    """List registered VIMs (secrets are never returned by the server).

    \b
    Example:
      vnfm vim list
    """
    cc.emit(cc.client.list_vims(), columns=VIM_COLUMNS)


@vim.command("show")
@click.argument("vim_id")
@json_option
@pass_cc
def vim_show(cc: CliContext, vim_id: str) -> None:
    """Show one VIM.

    \b
    Example:
      vnfm vim show VIM_ID
    """
    cc.emit(cc.client.get_vim(vim_id), render_fields)


@vim.command("register")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
@pass_cc
def vim_register(cc: CliContext, file: Path) -> None:
    """Register a VIM from a JSON file (vimType, interfaceInfo, accessInfo, ...).

    \b
    Example (vim.json: {"vimType": "openstack", "interfaceInfo": {"endpoint": "..."}, "accessInfo": {...}}):
      vnfm vim register vim.json
    """
    cc.emit(cc.client.register_vim(required_json_object(file, "FILE")), render_fields)


@vim.command("delete")
@click.argument("vim_id")
@pass_cc
def vim_delete(cc: CliContext, vim_id: str) -> None:
    """Delete a registered VIM.

    \b
    Example:
      vnfm vim delete VIM_ID
    """
    cc.client.delete_vim(vim_id)
    cc.info(f"VIM {vim_id} deleted")
