"""`vnfm dev ...`: for people working on vnfm itself."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def dev() -> None:
    """Developer tools (run in a vnfm source tree).

    \b
    Example:
      vnfm dev params-doc --check
    """


@dev.command("params-doc")
@click.option("--check", is_flag=True, help="Only say whether the files are in step; exit 1 when not.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="The source tree (holds docs/parameters.md and README.md).")
def params_doc(check: bool, root: Path) -> None:
    """Write the additionalParams tables of docs/parameters.md and README.md from the declared schemas.

    \b
    Example:
      vnfm dev params-doc --check
    """
    from vnfm.entrypoints.cli import params_doc as gen

    if check:
        stale = gen.stale(root)
        if stale:
            raise click.ClickException(f"out of step with the schemas: {', '.join(stale)} "
                                       "(run `vnfm dev params-doc`)")
        click.echo("parameter tables are in step with the schemas")
        return
    changed = gen.write(root)
    click.echo(f"rewrote {', '.join(changed)}" if changed else "nothing to change")
