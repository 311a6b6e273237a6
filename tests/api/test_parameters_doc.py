"""docs/parameters.md and the README's parameter tables are generated from the declared schemas
(`vnfm dev params-doc`): they fail this test when they drift, and every declaration has its section."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from vnfm.entrypoints.cli.main import cli
from vnfm.entrypoints.cli.params_doc import FILES, SECTIONS, stale, write

ROOT = Path(__file__).resolve().parents[2]


def test_the_tables_are_in_step_with_the_schemas() -> None:
    assert stale(ROOT) == [], "run `vnfm dev params-doc` and commit the result"


def test_every_declaration_has_its_section_in_the_reference() -> None:
    text = (ROOT / "docs" / "parameters.md").read_text()
    for name in SECTIONS:
        assert f"<!-- params: {name} -->" in text


def test_a_drifted_table_is_seen_and_rewritten(tmp_path: Path) -> None:
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    doc = tmp_path / "docs" / "parameters.md"
    doc.write_text(doc.read_text().replace("| pod network", "| the pod network, edited by hand", 1))
    assert stale(tmp_path) == ["docs/parameters.md"]
    res = CliRunner().invoke(cli, ["dev", "params-doc", "--check", "--root", str(tmp_path)])
    assert res.exit_code == 1 and "docs/parameters.md" in res.output
    assert write(tmp_path) == ["docs/parameters.md"]
    assert stale(tmp_path) == [] and doc.read_text() == (ROOT / "docs" / "parameters.md").read_text()
