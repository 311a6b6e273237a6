"""`vnfm subscription ...` against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.cli.cli_fake import FakeVnfm, run


def test_subscription_commands(fake: FakeVnfm, tmp_path: Path) -> None:
    flt = tmp_path / "f.json"
    flt.write_text(json.dumps({"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}))
    res = run(fake, "subscription", "create", "http://cb/notify", "--filter-file", str(flt), "--json")
    sub = json.loads(res.stdout)
    assert sub["filter"] == {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}
    assert "http://cb/notify" in run(fake, "subscription", "list").stdout
    assert run(fake, "subscription", "delete", sub["id"]).exit_code == 0
    # --packages: the SOL005 subscriptions, kept apart from the LCM ones
    res = run(fake, "subscription", "create", "http://cb/pkg", "--packages", "--json")
    pkg_sub = json.loads(res.stdout)
    assert fake.requests[-1].url.path == "/vnfpkgm/v1/subscriptions"
    assert "http://cb/pkg" in run(fake, "subscription", "list", "--packages").stdout
    assert "http://cb/pkg" not in run(fake, "subscription", "list").stdout
    assert json.loads(run(fake, "subscription", "show", pkg_sub["id"], "--packages", "--json").stdout) == pkg_sub
    assert run(fake, "subscription", "delete", pkg_sub["id"], "--packages").exit_code == 0
    assert fake.requests[-1].url.path == f"/vnfpkgm/v1/subscriptions/{pkg_sub['id']}"
    assert fake.pkgm_subs == {}
