"""`vnfm healthcheck`: is the server that these settings describe up (GET /healthz) or ready (GET
/readyz)? For a container's HEALTHCHECK and a service manager's probe: it reads the same settings
as `vnfm server` (VNFM_* variables, --config / VNFM_CONFIG), so it needs no URL."""

from __future__ import annotations

from pathlib import Path

import click
import httpx

WILDCARD = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # noqa: S104 - mapped away from


def probe_url(host: str, port: int, tls: bool, path: str) -> str:
    """The URL of `path` on the server listening on host:port (a wildcard address: this host's loopback)."""
    host = WILDCARD.get(host, host)
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}{path}"


@click.command()
@click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The server's TOML settings file (env VNFM_CONFIG).")
@click.option("--ready", is_flag=True, help="Ask /readyz (database answers, engine runs) instead of /healthz.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=4.0, show_default=True, metavar="SECONDS")
def healthcheck(config: Path | None, ready: bool, timeout: float) -> None:
    """Check that the local vnfm server answers (exit 0) or say why not (one line, exit 1).

    Over HTTPS when the settings have tls_cert; the certificate is not checked (the question is
    whether the process answers, not who it is). A bad setting is exit 2, as for `vnfm server`.

    \b
    Example (the container image's HEALTHCHECK; a systemd ExecStartPost):
      vnfm healthcheck
      vnfm healthcheck --ready --config /etc/vnfm/vnfm.toml
    """
    from vnfm.config import SettingsError, load_settings  # not the server: quick to start

    try:
        settings = load_settings(config)
    except SettingsError as e:
        for line in e.lines:
            click.echo(f"Error: {line}", err=True)
        raise SystemExit(2) from None
    url = probe_url(settings.host, settings.port, settings.tls, "/readyz" if ready else "/healthz")
    try:
        resp = httpx.get(url, timeout=timeout, verify=False)  # noqa: S501 - liveness, not identity
    except httpx.HTTPError as exc:
        click.echo(f"unhealthy: {url}: {type(exc).__name__}: {exc or 'no answer'}", err=True)
        raise SystemExit(1) from None
    if resp.status_code != 200:
        click.echo(f"unhealthy: {url} answered {resp.status_code}: {resp.text.strip()[:200]}", err=True)
        raise SystemExit(1)
    click.echo(f"ok: {url}")
