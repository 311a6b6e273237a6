"""`vnfm server`: the API server in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vnfm.domain.secrets import URL_USERINFO


@click.command()
@click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="TOML settings file (keys as the VNFM_* variables without the prefix; env VNFM_CONFIG).")
@click.option("--host", default=None, help="Address to listen on (default 127.0.0.1, env VNFM_HOST).")
@click.option("--port", type=int, default=None, help="Port to listen on (default 9890, env VNFM_PORT).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the database, packages and simulator state live (default ./var, env VNFM_DATA_DIR).",
)
@click.option(
    "--database-url",
    default=None,
    help="SQLAlchemy URL (default sqlite in the data dir; a postgresql+psycopg:// URL works). "
         "A URL with a password goes in VNFM_DATABASE_URL, not here (command lines are visible to all).",
)
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
              default=None, help="Log level of vnfm's loggers (default INFO, env VNFM_LOG_LEVEL).")
@click.option("--log-format", type=click.Choice(["human", "json"], case_sensitive=False), default=None,
              help="human (default) or json: one JSON object a line (env VNFM_LOG_FORMAT).")
@click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PEM certificate: serve HTTPS (with --tls-key; env VNFM_TLS_CERT).")
@click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PEM private key of --tls-cert (env VNFM_TLS_KEY).")
@click.option("--simulator/--no-simulator", default=None,
              help="The simulated cloud as a VIM, with its /sim/v1 API (default on; env VNFM_SIMULATOR; "
                   "off in deploy/vnfm.toml).")
@click.option("--fault-injection/--no-fault-injection", default=None,
              help="Mount the simulator's fault-injection API (tests, demos; env VNFM_FAULT_INJECTION).")
@click.option("--insecure-no-auth", "allow_insecure_no_auth", is_flag=True, default=None,
              help="Listen beyond loopback WITHOUT authentication: anyone who reaches the port is an admin "
                   "(env VNFM_ALLOW_INSECURE_NO_AUTH=1). Never in production.")
def server(config: Path | None, **options: Any) -> None:
    """Run the vnfm API server in the foreground (Ctrl-C stops it).

    Settings come from these options, then the VNFM_* environment, then the --config file.
    A bad setting ends the start with one line naming it. Beyond 127.0.0.1 the server needs
    authentication (oauth2_clients, oauth2_jwks_url, oauth2_introspection_url or auth_token in the
    settings) unless started with --insecure-no-auth.

    \b
    Example:
      vnfm server --port 9890 --data-dir ./var
      vnfm server --config /etc/vnfm/vnfm.toml --log-format json
    """
    # Imported here, not at the top: the server (FastAPI, SQLAlchemy, the engine) is not needed by
    # the client commands and would slow every `vnfm ...` down.
    from vnfm.config import SettingsError, load_settings
    from vnfm.entrypoints.api.server import preflight, serve

    if options.get("database_url") and URL_USERINFO.search(options["database_url"]):
        raise click.UsageError("--database-url carries a password, which every user of this machine can "
                               "read on the command line: give the URL in VNFM_DATABASE_URL (or the "
                               "--config file) instead")

    overrides = {k: (v.upper() if k == "log_level" else v.lower() if k == "log_format" else v)
                 for k, v in options.items() if v is not None}
    try:
        settings = load_settings(config, **overrides)
        sock = preflight(settings)
        serve(settings, sock)  # a SettingsError only before the engine starts
    except SettingsError as e:
        for line in e.lines:
            click.echo(f"Error: {line}", err=True)
        raise SystemExit(2) from None
