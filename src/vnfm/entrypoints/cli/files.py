"""Files the user names on the command line: JSON request files and packages to upload."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from vnfm.packaging.csar import build_csar


def load_json_file(path: Path, what: str) -> Any:
    """The JSON in `path`; a click.BadParameter naming `what` (the option or argument) that says
    what is wrong, e.g. the '# ...' notes copied from the examples."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise click.BadParameter(f"cannot read {path}: {e.strerror}", param_hint=what) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        hint = (
            " (JSON has no comments: remove the '# ...' notes copied from the examples)"
            if "#" in text
            else ""
        )
        raise click.BadParameter(
            f"{path} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}{hint}", param_hint=what
        ) from None


def load_json_object(path: Path | None, what: str) -> dict[str, Any] | None:
    """The JSON object in `path` (None when no path is given)."""
    if path is None:
        return None
    value = load_json_file(path, what)
    if not isinstance(value, dict):
        raise click.BadParameter(f"{path} must hold a JSON object", param_hint=what)
    return value


def required_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in `path`, for a file argument that cannot be left out."""
    body = load_json_object(path, what)
    assert body is not None
    return body


F = TypeVar("F", bound=Callable[..., Any])


def file_option(help_text: str) -> Callable[[F], F]:
    """`--file FILE` for a command that writes a document; `-o/--output FILE`, its former name, still
    works with a deprecation line (-o is the output format everywhere else). The command gets
    `file` (the path or None)."""

    def decorate(f: F) -> F:
        def merge(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
            if value is None:
                return
            click.echo("warning: -o/--output FILE is deprecated here: use --file FILE "
                       "(-o means the output format, as in the other commands)", err=True)
            if ctx.params.get("file") not in (None, value):
                raise click.UsageError("give --file FILE only (-o/--output is its deprecated name)")
            ctx.params["file"] = value

        f = click.option("-o", "--output", "legacy_output", type=click.Path(dir_okay=False, path_type=Path),
                         default=None, hidden=True, expose_value=False, callback=merge)(f)
        return click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                            is_eager=True, help=help_text)(f)

    return decorate


def csar_bytes(path: Path) -> bytes:
    """The CSAR to upload: the file itself, or a zip built from a package directory."""
    if not path.is_dir():
        return path.read_bytes()
    return build_csar(path)
