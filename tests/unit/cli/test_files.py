"""Files named on the command line (files.py)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.cli.cli_fake import FakeVnfm, run


def test_bad_request_file_is_explained(fake: FakeVnfm, tmp_path: Path) -> None:
    p = tmp_path / "req.json"
    p.write_text('{\n  "flavourId": "simple", #Set the flavour\n}')
    res = run(fake, "vnf", "instantiate", "vnf-1", str(p))
    assert res.exit_code == 2
    assert "is not valid JSON" in res.output and "line 2" in res.output and "comments" in res.output
    assert fake.requests == []
