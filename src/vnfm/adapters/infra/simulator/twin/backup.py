"""The restore drill on the twin (nodesteps/backup.py): the snapshot's content, as the host keeps
it (`twin/upgrade.py`), restored into a throw-away simulated etcd whose keys are counted and compared
with the snapshot's. As strict as the script: a control plane only, the file there with its digest; the
cluster's etcd is never touched. The twin's etcd keeps no
revision: the revision is checked only when the snapshot recorded one.
"""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost
from vnfm.adapters.infra.simulator.twin.upgrade import _host, _master, etcd_keys
from vnfm.nodesteps.backup import EtcdRestoreDrill
from vnfm.nodesteps.base import StepFailed, StepResult


def restore_drill(tw: TwinHost, host: str, sid: str, step: EtcdRestoreDrill) -> StepResult:
    def fn(st: dict[str, Any]) -> dict[str, Any]:
        _master(host, sid, step, st)
        h = _host(st, sid)
        s = (h.get("snapshots") or {}).get(step.path)
        if s is None:
            raise StepFailed(host, step, f"no snapshot at {step.path}")
        if s["sha256"] != step.sha256:
            raise StepFailed(host, step, f"the snapshot at {step.path} is not the one expected (digest differs)")
        if s.get("content") is None:
            raise StepFailed(host, step, "Error: snapshot file integrity check failed (the snapshot is corrupt)")
        scratch = {"etcd": {"members": {"drill": {"healthy": True}}}, **dict(s["content"])}  # a throw-away etcd
        keys = len(etcd_keys(scratch))
        if keys != step.keys:
            raise StepFailed(host, step, f"the restored etcd holds {keys} keys, the snapshot {step.keys}")
        revision = int(s.get("revision") or 0)
        if revision and step.revision and revision != step.revision:
            raise StepFailed(host, step, f"the scratch etcd is at revision {revision}, the snapshot at "
                                         f"{step.revision}")
        h["drills"] = int(h.get("drills") or 0) + 1
        return {"keys": keys, "live_keys": keys, "revision": revision}

    return StepResult(False, tw.tx(fn))


HANDLERS: dict[type, Any] = {EtcdRestoreDrill: restore_drill}
