"""`vnfm vim ...`: the VIMs to deploy on (vnfm's own /vnfm/v1/vims API)."""

from __future__ import annotations

import os
from pathlib import Path

import click
import yaml

from vnfm.adapters.infra.openstack.openrc import access_info, read_clouds_yaml, read_openrc
from vnfm.entrypoints.cli.context import CliContext, json_option, pass_cc
from vnfm.entrypoints.cli.files import file_option, required_json_object
from vnfm.entrypoints.cli.output import render_fields
from vnfm.entrypoints.cli.render import VIM_COLUMNS
from vnfm.service.vims import OPENSTACK_TYPES


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
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--openrc", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="An OpenStack openrc file (OS_* variables; read, never executed).")
@click.option("--os-cloud", "os_cloud", metavar="NAME", help="A cloud of clouds.yaml (as `openstack --os-cloud`).")
@click.option("--name", help="The VIM's name (default: the cloud's name, or the openrc file's).")
@click.option("--is-default", is_flag=True,
              help="Make it the default VIM (requests without vimConnectionInfo run on it); replaces the current one.")
@click.option("--no-probe", is_flag=True, help="Register without checking that Keystone answers and takes the "
                                               "credentials.")
@json_option
@pass_cc
def vim_register(cc: CliContext, file: Path | None, openrc: Path | None, os_cloud: str | None, name: str | None,
                 is_default: bool, no_probe: bool) -> None:
    """Register a VIM: an OpenStack cloud from an openrc file or clouds.yaml, or any VIM from a
    JSON file (vimType, accessInfo, ...). The server first checks that an OpenStack VIM's Keystone
    answers and accepts the credentials, and says which failed.

    \b
    Examples:
      vnfm vim register --openrc admin-openrc.sh --name my-cloud --is-default
      vnfm vim register --os-cloud mycloud
      vnfm vim register vim.json
    """
    given = [x for x in (file, openrc, os_cloud) if x]
    if len(given) != 1:
        raise click.UsageError("give one of FILE, --openrc or --os-cloud")
    if file is not None:
        body = required_json_object(file, "FILE")
    else:
        try:
            env = read_openrc(openrc) if openrc is not None else read_clouds_yaml(str(os_cloud))
            body = {"vimType": "openstack", "name": os_cloud or (openrc.stem if openrc else ""),
                    "accessInfo": access_info(env)}
        except (OSError, ValueError) as exc:
            raise click.UsageError(str(exc)) from None
    if name:
        body["name"] = name
    if is_default:
        body["isDefault"] = True
    openstack = str(body.get("vimType", "")).lower() in OPENSTACK_TYPES
    if not openstack and not no_probe:
        cc.info(f"not probed: only OpenStack VIMs are (vimType {body.get('vimType')!r})")
    cc.emit(cc.client.register_vim(body, probe=openstack and not no_probe), render_fields)


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
@file_option("Write to this file (mode 0600) instead of standard output.")
@pass_cc
def vim_kubeconfig(cc: CliContext, vim_id: str, show_token: bool, file: Path | None) -> None:
    """Print a kubeconfig for a Kubernetes VIM (server URL and CA; the token only with --show-token).

    \b
    Example (a cluster the kubeadm driver built on the simulated cloud):
      vnfm vim kubeconfig VIM_ID --show-token --file sim.kubeconfig
      kubectl --kubeconfig sim.kubeconfig get nodes
    """
    doc = cc.client.vim_kubeconfig(vim_id, show_token=show_token)
    text = yaml.safe_dump(doc, sort_keys=False)
    if file is None:
        click.echo(text, nl=False)
    else:
        fd = os.open(file, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
        os.fchmod(fd, 0o600)  # a file that was already there keeps its mode otherwise
        with os.fdopen(fd, "w") as f:
            f.write(text)
        cc.info(f"kubeconfig of VIM {vim_id} written to {file}")
    if not show_token:
        click.echo("no token included: add --show-token for a kubeconfig that authenticates", err=True)
