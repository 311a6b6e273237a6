"""`vnfm completion SHELL`: the shell's completion script (click's own completion: commands,
options, choices and file names)."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

SHELLS = ("bash", "zsh", "fish")


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script of SHELL (bash, zsh or fish) for `vnfm`.

    \b
    Example (load it in this shell, or for every new one):
      eval "$(vnfm completion bash)"
      vnfm completion bash > ~/.local/share/bash-completion/completions/vnfm
      vnfm completion zsh > "${fpath[1]}/_vnfm"          # zsh (then: compinit)
      vnfm completion fish > ~/.config/fish/completions/vnfm.fish
    """
    cls = get_completion_class(shell)
    assert cls is not None  # every name of SHELLS has one
    root = ctx.find_root()
    click.echo(cls(root.command, {}, root.info_name or "vnfm", "_VNFM_COMPLETE").source())
