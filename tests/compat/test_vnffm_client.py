"""The stock python-tackerclient's fault-management commands (`openstack vnffm alarm list/show/update`,
`vnffm sub ...`) against vnfm's /vnffm/v1. python-tackerclient 2.x has them in its v2 command set
(`--os-tacker-api-version 2`), speaking the same /vnffm/v1 paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnfm.adapters.db.engine import make_session_factory
from vnfm.adapters.db.uow import SqlAlchemyUnitOfWork
from vnfm.domain.alarms import CAUSE_CERT_EXPIRING, CAUSE_SERVER_DOWN, CERT_CAUSES, PerceivedSeverity
from vnfm.entrypoints.api.server import ServerHandle
from vnfm.service.fm.alarms import AlarmService, Finding

from .conftest import Cli

pytestmark = pytest.mark.slow


def test_vnffm_alarm_list_show_update(server: ServerHandle, cli: Cli, tmp_path: Path) -> None:
    url = server.server.config.app.state.vnfm.settings.database_url  # type: ignore[attr-defined]
    factory = make_session_factory(url)
    alarms = AlarmService(lambda: SqlAlchemyUnitOfWork(factory))
    raised, _ = alarms.record("inst-compat", "default", {"vnfc-1": Finding(CAUSE_SERVER_DOWN, ("down",),
                                                                             PerceivedSeverity.CRITICAL)})
    alarm_id = raised[0].id
    # a control plane's certificate expiry alarm, as the certificate watch raises it
    cert, _ = alarms.record("inst-compat", "default", {"vnfc-0": Finding(
        CAUSE_CERT_EXPIRING, ("node master-0: certificate apiserver expires on 2027-01-01T00:00:00Z",),
        PerceivedSeverity.WARNING, fault_type="apiserver")}, CERT_CAUSES, replace=True)
    v2 = ("--os-tacker-api-version", "2", "vnffm", "alarm")
    listed, shown, cert_shown = cli.many((*v2, "list"), (*v2, "show", alarm_id), (*v2, "show", cert[0].id))
    assert sorted(a["ID"] for a in listed) == sorted([alarm_id, cert[0].id])
    by_id = {a["ID"]: a for a in listed}
    assert by_id[alarm_id]["Perceived Severity"] == "CRITICAL" and by_id[alarm_id]["Ack State"] == "UNACKNOWLEDGED"
    assert by_id[cert[0].id]["Perceived Severity"] == "WARNING"
    assert shown["Probable Cause"] == CAUSE_SERVER_DOWN
    assert cert_shown["Probable Cause"] == CAUSE_CERT_EXPIRING and cert_shown["Fault Type"] == "apiserver"
    updated = cli.json(*v2, "update", "--ack-state", "ACKNOWLEDGED", alarm_id)
    assert updated["Ack State"] == "ACKNOWLEDGED"
    again = cli.run(*v2, "update", "--ack-state", "ACKNOWLEDGED", alarm_id, check=False)
    assert again.returncode != 0 and "acknowledged already" in again.stderr
