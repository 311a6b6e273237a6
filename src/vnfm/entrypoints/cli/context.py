"""What every command shares: the CliContext (endpoint, token, output mode, the client), the
decorator that hands it to a command, and the `--json` option that also works after a subcommand."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click
import httpx
import yaml

from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.output import Column, cell, mask_secrets, render_fields, render_table, to_json

FORMATS = ("table", "json", "yaml", "value")

DEFAULT_ENDPOINT = "http://127.0.0.1:9890"
F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class CliContext:
    endpoint: str
    token: str | None = None
    json_out: bool = False
    show_secrets: bool = False
    output: str = "table"  # -o: table (people), json, yaml, value (bare values, one row a line)
    columns: tuple[str, ...] = ()  # -c: only these columns (list headers) or fields (keys)
    transport: httpx.BaseTransport | None = None
    auth: httpx.Auth | None = None  # OAuth 2.0 client credentials (credentials.ClientCredentials)
    verify: Any = True  # the server's CA and our client certificate (credentials.tls_verify)
    _client: VnfmClient | None = None

    @property
    def client(self) -> VnfmClient:
        if self._client is None:
            self._client = VnfmClient(self.endpoint, token=self.token, transport=self.transport, auth=self.auth,
                                      verify=self.verify)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def safe(self, value: Any) -> Any:
        return value if self.show_secrets else mask_secrets(value)

    @property
    def format(self) -> str:
        return self.output if self.output != "table" else ("json" if self.json_out else "table")

    def emit(self, value: Any, human: Callable[[Any], str] | None = None, *,
             columns: Sequence[Column] | None = None) -> None:
        """Print `value` in the chosen format (-o, --json) with the chosen columns (-c): a list
        through `columns`, an object through `human` (default: a field list); secrets masked
        unless --show-secrets."""
        value = self.safe(value)
        if isinstance(value, list) and columns is not None:
            click.echo(self._rows(value, self._pick(columns)))
        elif isinstance(value, dict):
            click.echo(self._object(value, human or render_fields))
        else:
            click.echo(self._dump(value) if self.format != "table" else (human or str)(value))

    def _dump(self, value: Any) -> str:
        if self.format == "yaml":
            return yaml.safe_dump(value, sort_keys=False, allow_unicode=True).rstrip()
        if self.format == "value":
            return "\n".join(cell(v) for v in (value if isinstance(value, list) else [value]))
        return to_json(value)

    def _pick(self, columns: Sequence[Column]) -> list[Column]:
        if not self.columns:
            return list(columns)
        by_name = {h.lower(): (h, get) for h, get in columns}
        unknown = [c for c in self.columns if c.lower() not in by_name]
        if unknown:
            raise click.UsageError(f"no column {', '.join(unknown)} (columns: {', '.join(h for h, _ in columns)})")
        return [by_name[c.lower()] for c in self.columns]

    def _rows(self, rows: list[dict[str, Any]], cols: list[Column]) -> str:
        fmt = self.format
        if fmt == "table":
            return render_table(rows, cols)
        if fmt == "value":
            return "\n".join(" ".join(cell(get(r)) for _, get in cols) for r in rows)
        return self._dump([{h: get(r) for h, get in cols} for r in rows] if self.columns else rows)

    def _object(self, obj: dict[str, Any], human: Callable[[Any], str]) -> str:
        fmt = self.format
        if self.columns:
            by_name = {str(k).lower(): k for k in obj}
            unknown = [c for c in self.columns if c.lower() not in by_name]
            if unknown:
                raise click.UsageError(f"no field {', '.join(unknown)} (fields: {', '.join(map(str, obj))})")
            obj = {by_name[c.lower()]: obj[by_name[c.lower()]] for c in self.columns}
            human = render_fields
        if fmt == "table":
            return human(obj)
        if fmt == "value":
            return "\n".join(cell(v) for k, v in obj.items() if k != "_links")
        return self._dump(obj)

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


def _set_format(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        cc = ctx.ensure_object(CliContext)
        cc.output = value.lower()
        cc.json_out = cc.json_out or cc.output != "table"  # notes to stderr: stdout stays parseable


def _set_columns(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    if value:
        cc = ctx.ensure_object(CliContext)
        cc.columns = cc.columns + tuple(value)


def output_options(f: F) -> F:
    """-o/--output FORMAT and -c/--column NAME (as python-openstackclient has -f and -c)."""
    f = click.option("-c", "--column", "column_opt", multiple=True, metavar="NAME", expose_value=False,
                     callback=_set_columns, help="Show only this column / field (repeatable).")(f)
    return click.option("-o", "--output", "output_opt", type=click.Choice(FORMATS, case_sensitive=False),
                        default=None, expose_value=False, callback=_set_format,
                        help="Output format: table (default), json, yaml or value.")(f)


def json_option(f: F) -> F:
    """`--json` (and -o / -c) also after the subcommand (`vnfm vnf list --json`)."""
    f = output_options(f)
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
