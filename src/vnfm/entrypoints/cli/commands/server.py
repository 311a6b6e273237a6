"""`vnfm server`: the API server in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


@click.command()
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
    help="SQLAlchemy URL (default sqlite in the data dir; a postgresql+psycopg:// URL works).",
)
def server(host: str | None, port: int | None, data_dir: Path | None, database_url: str | None) -> None:
    """Run the vnfm API server in the foreground (Ctrl-C stops it).

    \b
    Example:
      vnfm server --port 9890 --data-dir ./var
    """
    # Imported here, not at the top: the server (FastAPI, SQLAlchemy, the engine) is not needed by
    # the client commands and would slow every `vnfm ...` down.
    from vnfm.config import Settings
    from vnfm.entrypoints.api.server import serve

    kwargs: dict[str, Any] = {}
    if host is not None:
        kwargs["host"] = host
    if port is not None:
        kwargs["port"] = port
    if data_dir is not None:
        kwargs["data_dir"] = data_dir
    if database_url is not None:
        kwargs["database_url"] = database_url
    serve(Settings(**kwargs))
