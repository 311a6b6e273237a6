"""`vnfm`: the command-line tool (click). Every command except `server` and `demo` is a plain HTTP
client of a running vnfm server (see `--endpoint`).

This module is the root group (global options, one readable line for API and connection errors)
and the console entry point; each command group lives in commands/<group>.py."""

from __future__ import annotations

import os
from typing import Any

import click

from vnfm.entrypoints.cli.client import ApiError, ServerUnreachable
from vnfm.entrypoints.cli.commands.auth import auth
from vnfm.entrypoints.cli.commands.completion import completion
from vnfm.entrypoints.cli.commands.demo import demo
from vnfm.entrypoints.cli.commands.dev import dev
from vnfm.entrypoints.cli.commands.doctor import doctor
from vnfm.entrypoints.cli.commands.healthcheck import healthcheck
from vnfm.entrypoints.cli.commands.op import op
from vnfm.entrypoints.cli.commands.package import package
from vnfm.entrypoints.cli.commands.server import server
from vnfm.entrypoints.cli.commands.sim import sim
from vnfm.entrypoints.cli.commands.subscription import subscription
from vnfm.entrypoints.cli.commands.vim import vim
from vnfm.entrypoints.cli.commands.vnf import vnf
from vnfm.entrypoints.cli.context import DEFAULT_ENDPOINT, FORMATS, CliContext
from vnfm.entrypoints.cli.credentials import ClientCredentials, tls_verify
from vnfm.entrypoints.cli.output import mask_text
from vnfm.entrypoints.cli.tlsdiag import TlsFailure
from vnfm.entrypoints.cli.wait import EXIT_WAIT_TIMEOUT, WaitTimeout


class VnfmGroup(click.Group):
    """Turns API and connection errors into one readable line on stderr and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ApiError as e:
            detail = mask_text(e.detail)
            click.echo(
                f"Error {e.status} {e.title}: {detail}" if detail else f"Error {e.status} {e.title}", err=True
            )
            ctx.exit(1)
        except ServerUnreachable as e:
            if not e.refused:
                click.echo(
                    f"Error: no usable answer from the vnfm server at {e.endpoint}: {e.reason}", err=True
                )
                ctx.exit(1)
            click.echo(
                f"Error: the vnfm server is not running at {e.endpoint} ({e.reason}).\n"
                f"Start it with `vnfm server` (or `vnfm server --port N`), or point to another one with "
                f"--endpoint URL / VNFM_ENDPOINT.",
                err=True,
            )
            ctx.exit(1)
        except TlsFailure as e:
            click.echo(f"Error: TLS with the vnfm server at {e.endpoint}: {e}", err=True)
            ctx.exit(1)
        except WaitTimeout as e:
            click.echo(f"Error: {e}", err=True)
            ctx.exit(EXIT_WAIT_TIMEOUT)
        finally:
            obj = ctx.find_object(CliContext)
            if obj is not None and ctx.parent is None:
                obj.close()


@click.group(
    cls=VnfmGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}
)
@click.option(
    "--endpoint",
    envvar="VNFM_ENDPOINT",
    default=DEFAULT_ENDPOINT,
    show_default=True,
    show_envvar=True,
    help="Base URL of the vnfm server.",
)
@click.option(
    "--token",
    envvar="VNFM_TOKEN",
    show_envvar=True,
    default=None,
    help="Token sent as X-Auth-Token (never printed).",
)
@click.option("--client-id", envvar="VNFM_CLIENT_ID", show_envvar=True, default=None,
              help="OAuth 2.0 client: get (and cache) tokens from the server's /oauth2/token; the secret "
                   "comes from VNFM_CLIENT_SECRET (never from the command line).")
@click.option("--cert", envvar="VNFM_CLIENT_CERT", show_envvar=True, default=None,
              type=click.Path(exists=True, dir_okay=False), help="Client certificate (PEM) for mutual TLS.")
@click.option("--key", envvar="VNFM_CLIENT_KEY", show_envvar=True, default=None,
              type=click.Path(exists=True, dir_okay=False), help="Private key of --cert (PEM).")
@click.option("--cacert", envvar="VNFM_CACERT", show_envvar=True, default=None,
              type=click.Path(exists=True, dir_okay=False),
              help="CA bundle (PEM) the server's certificate is checked against.")
@click.option("--insecure", is_flag=True, envvar="VNFM_INSECURE", show_envvar=True,
              help="Do not check the server's certificate (tests only: anyone on the path can read the token).")
@click.option("--json", "json_out", is_flag=True, help="Print raw JSON instead of tables.")
@click.option("-o", "--output", "output", type=click.Choice(FORMATS, case_sensitive=False), default=None,
              help="Output format: table (default), json, yaml or value.")
@click.option("-c", "--column", "columns", multiple=True, metavar="NAME",
              help="Show only this column / field (repeatable).")
@click.option("--show-secrets", is_flag=True, help="Do not mask passwords/tokens in what is printed.")
@click.version_option(package_name="vnfm", prog_name="vnfm")
@click.pass_context
def cli(ctx: click.Context, endpoint: str, token: str | None, client_id: str | None, cert: str | None,
        key: str | None, cacert: str | None, insecure: bool, json_out: bool, output: str | None,
        columns: tuple[str, ...], show_secrets: bool) -> None:
    """vnfm: an ETSI NFV VNF manager (SOL003 VNF LCM, SOL005 VNF packages, v2.6.1).

    \b
    Try it all in one go (server, package, create, instantiate, scale, heal, terminate):
      vnfm demo
    Or run a server and drive it:
      vnfm server &
      vnfm package list
      vnfm vnf instantiate VNF_ID request.json --wait
    """
    given = ctx.obj if isinstance(ctx.obj, CliContext) else None
    transport = given.transport if given is not None else None
    if isinstance(ctx.obj, dict):  # tests: CliRunner.invoke(cli, ..., obj={"transport": ...})
        transport = ctx.obj.get("transport")
    cc = CliContext(endpoint=endpoint, token=token or None, transport=transport)
    if client_id:
        secret = os.environ.get("VNFM_CLIENT_SECRET", "")
        if not secret:
            raise click.UsageError("--client-id / VNFM_CLIENT_ID needs the client's secret in VNFM_CLIENT_SECRET")
        cc.auth = ClientCredentials(endpoint, client_id, secret)
    if insecure and cacert:
        raise click.UsageError("--insecure and --cacert do not go together: --cacert checks the certificate")
    if cert or cacert or insecure:
        cc.verify = tls_verify(cacert, cert, key, insecure=insecure)
    if insecure:
        click.echo("warning: --insecure: the server's certificate is not checked", err=True)
    cc.json_out = json_out or (given.json_out if given is not None else False)
    cc.show_secrets = show_secrets
    if output:
        cc.output = output.lower()
        cc.json_out = cc.json_out or cc.output != "table"
    cc.columns = tuple(columns)
    ctx.obj = cc


for command in (server, demo, auth, package, vnf, op, subscription, vim, sim, dev, completion, healthcheck, doctor):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="vnfm")


if __name__ == "__main__":  # pragma: no cover
    main()
