"""`vnfm demo` (commands/demo.py, demo/run.py): the server started in this process, the scenario
run, the temporary data dir removed."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from vnfm.entrypoints.cli.main import cli


def test_demo_command_end_to_end() -> None:
    res = CliRunner().invoke(cli, ["demo", "--timeout", "120"])
    assert res.exit_code == 0, res.output
    assert "Demo succeeded" in res.output
    # it ends with what to do next
    assert res.output.rstrip().splitlines()[-9] == "Next:" and "docs/openstack.md" in res.output.splitlines()[-1]
    assert '"password": "ubuntu"' not in res.output
    # the fresh temporary data dir is removed afterwards
    m = re.search(r"\(data: (\S+),", res.output)
    assert m is not None
    assert not Path(m.group(1)).exists()


def test_demo_rejects_unknown_scenario() -> None:
    res = CliRunner().invoke(cli, ["demo", "--scenario", "nope"])
    assert res.exit_code == 2 and "nope" in res.output
