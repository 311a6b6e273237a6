"""What every command shares: the CliContext (endpoint, token, output mode, the client), the
decorator that hands it to a command, and the `--json` option that also works after a subcommand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click
import httpx

from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.output import mask_secrets, to_json

DEFAULT_ENDPOINT = "http://127.0.0.1:9890"
F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class CliContext:
    endpoint: str
    token: str | None = None
    json_out: bool = False
    show_secrets: bool = False
    transport: httpx.BaseTransport | None = None
    _client: VnfmClient | None = None

    @property
    def client(self) -> VnfmClient:
        if self._client is None:
            self._client = VnfmClient(self.endpoint, token=self.token, transport=self.transport)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def safe(self, value: Any) -> Any:
        return value if self.show_secrets else mask_secrets(value)

    def emit(self, value: Any, human: Callable[[Any], str]) -> None:
        """Print `value` as JSON (--json) or through `human`, secrets masked unless --show-secrets."""
        value = self.safe(value)
        click.echo(to_json(value) if self.json_out else human(value))

    def info(self, text: str) -> None:
        """Progress and notes: stdout for people, stderr under --json so stdout stays parseable."""
        click.echo(text, err=self.json_out)

    def echo_result(self, value: Any, text: str) -> None:
        """An action's answer: `value` as JSON (--json, secrets masked), else the sentence `text`."""
        click.echo(to_json(self.safe(value)) if self.json_out else text)


pass_cc = click.make_pass_decorator(CliContext)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(CliContext).json_out = True


def json_option(f: F) -> F:
    """`--json` also after the subcommand (`vnfm vnf list --json`)."""
    return click.option(
        "--json",
        "json_flag",
        is_flag=True,
        expose_value=False,
        callback=_set_json,
        help="Print the raw JSON representation instead of a table.",
    )(f)


def filter_option(example: str) -> Callable[[F], F]:
    """`--filter EXPR` of the list commands (a SOL013 attribute filter)."""
    return click.option(
        "--filter",
        "filter_",
        default=None,
        metavar="EXPR",
        help=f"SOL013 attribute filter, e.g. '{example}'.",
    )
