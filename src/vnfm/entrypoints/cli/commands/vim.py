"""`vnfm vim ...`: the VIMs to deploy on (vnfm's own /vnfm/v1/vims API)."""

from __future__ import annotations

import os
from pathlib import Path

import click
import yaml

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


@vim.command("kubeconfig")
@click.argument("vim_id")
@click.option("--show-token", is_flag=True, help="Include the VIM's bearer token (a secret: keep the file private).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file (mode 0600) instead of standard output.")
@pass_cc
def vim_kubeconfig(cc: CliContext, vim_id: str, show_token: bool, output: Path | None) -> None:
    """Print a kubeconfig for a Kubernetes VIM (server URL and CA; the token only with --show-token).

    \b
    Example (a cluster the kubeadm driver built on the simulated cloud):
      vnfm vim kubeconfig VIM_ID --show-token -o sim.kubeconfig
      kubectl --kubeconfig sim.kubeconfig get nodes
    """
    doc = cc.client.vim_kubeconfig(vim_id, show_token=show_token)
    text = yaml.safe_dump(doc, sort_keys=False)
    if output is None:
        click.echo(text, nl=False)
    else:
        fd = os.open(output, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
        os.fchmod(fd, 0o600)  # a file that was already there keeps its mode otherwise
        with os.fdopen(fd, "w") as f:
            f.write(text)
        cc.info(f"kubeconfig of VIM {vim_id} written to {output}")
    if not show_token:
        click.echo("no token included: add --show-token for a kubeconfig that authenticates", err=True)
