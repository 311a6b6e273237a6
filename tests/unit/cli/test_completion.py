"""`vnfm completion SHELL` prints a script that completes commands and options through click."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from vnfm.entrypoints.cli.main import cli


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_script_calls_back_into_vnfm(shell: str) -> None:
    res = CliRunner().invoke(cli, ["completion", shell], prog_name="vnfm")
    assert res.exit_code == 0, res.output
    assert f"_VNFM_COMPLETE={shell}_complete" in res.stdout


def test_what_the_script_asks_is_answered() -> None:
    """What bash's completion function runs on TAB: the subcommands and options that fit."""
    def complete(words: str) -> list[str]:
        env = {"_VNFM_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
        res = CliRunner().invoke(cli, [], prog_name="vnfm", env=env)
        assert res.exit_code == 0, res.output
        return [line.split(",", 1)[1] for line in res.stdout.splitlines()]

    assert "vnf" in complete("vnfm vn") and "vim" not in complete("vnfm vn")
    assert "--request" in complete("vnfm vnf scale X --re")
    assert [c.upper() for c in complete("vnfm vnf scale X --type SCALE_")] == ["SCALE_OUT", "SCALE_IN"]


def test_an_unknown_shell_is_refused() -> None:
    res = CliRunner().invoke(cli, ["completion", "tcsh"])
    assert res.exit_code == 2 and "tcsh" in res.output
