"""`vnfm auth ...`: the built-in OAuth 2.0 server's client secrets and signing keys (on the server's
machine; no server needs to run)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from vnfm.domain.secret_hash import hash_secret


@click.group()
def auth() -> None:
    """Set up authentication for `vnfm server`.

    \b
    Example:
      vnfm auth hash-secret                 # prompts; paste the hash into oauth2_clients
      vnfm auth rotate-key --data-dir /var/lib/vnfm
    """


@auth.command("hash-secret")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read the secret from standard input (one line).")
def hash_secret_cmd(from_stdin: bool) -> None:
    """Print the scrypt hash of a client secret for `secret_hash` of an [[oauth2_clients]] entry.

    The secret is read without echo (never from the command line, which every user can read).

    \b
    Example:
      vnfm auth hash-secret
      printf '%s\n' "$SECRET" | vnfm auth hash-secret --stdin
    """
    if from_stdin:
        secret = sys.stdin.readline().rstrip("\n")
    else:
        secret = click.prompt("client secret", hide_input=True, confirmation_prompt=True)
    if len(secret) < 16:
        raise click.UsageError("a client secret needs at least 16 characters")
    click.echo(hash_secret(secret))


@auth.command("new-secret-key")
def new_secret_key() -> None:
    """Print a new Fernet key for VNFM_SECRET_KEY (the key of stored VIM and subscription secrets).

    Rotation: put the new key first, the old one after it (VNFM_SECRET_KEY=NEW,OLD) on every
    process and restart them; each start re-encrypts what is stored with NEW. Then drop OLD.

    \b
    Example:
      vnfm auth new-secret-key
    """
    from cryptography.fernet import Fernet

    click.echo(Fernet.generate_key().decode())


@auth.command("rotate-key")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="VNFM_DATA_DIR",
              default=Path("var"), show_default=True, help="The server's data dir (env VNFM_DATA_DIR).")
@click.option("--keep", type=click.IntRange(min=2), default=2, show_default=True,
              help="Keys kept, the new one counted: older ones are removed (their tokens stop working).")
def rotate_key(data_dir: Path, keep: int) -> None:
    """Add a new signing key for the built-in OAuth 2.0 server; the running server signs with it
    within 30 s. Tokens signed with a kept older key stay valid until they expire.

    \b
    Example:
      vnfm auth rotate-key --data-dir /var/lib/vnfm
    """
    from vnfm.adapters.auth.keys import rotate

    new, removed = rotate(data_dir, keep=keep)
    click.echo(f"new signing key {new.kid}" + (f"; removed {', '.join(removed)}" if removed else ""))
