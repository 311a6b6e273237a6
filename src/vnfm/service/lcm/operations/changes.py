"""The occurrence's resourceChanges (SOL003 affectedVnfcs / affectedVirtualStorages)."""

from __future__ import annotations

from typing import Any

from vnfm.domain.resources import StorageResource, Vnfc
from vnfm.service.lcm.job import Job


def affected(job: Job, vnfcs: list[Vnfc], change: str) -> None:
    """Record that `vnfcs` were ADDED / REMOVED / MODIFIED (and, when added or removed, their storage)."""
    rc = job.occ.resource_changes.setdefault("affectedVnfcs", [])
    rc.extend(_vnfc_change(job, v, change) for v in vnfcs)
    storages = job.occ.resource_changes.setdefault("affectedVirtualStorages", [])
    if change in ("ADDED", "REMOVED"):
        for v in vnfcs:
            storages.extend(_storage_change(job, s, change) for s in v.storages)
    if not storages:
        job.occ.resource_changes.pop("affectedVirtualStorages", None)


def _vnfc_change(job: Job, v: Vnfc, change: str) -> dict[str, Any]:
    return {
        "id": v.id,
        "vduId": v.vdu_id,
        "changeType": change,
        "computeResource": {
            "vimConnectionId": job.inst.vim_connection_id,
            "resourceId": v.server_id,
            "vimLevelResourceType": v.resource_type,
        },
        "affectedVnfcCpIds": [c.id for c in v.cps],
        **(
            {"addedStorageResourceIds": [s.id for s in v.storages]}
            if change == "ADDED" and v.storages
            else {}
        ),
        **(
            {"removedStorageResourceIds": [s.id for s in v.storages]}
            if change == "REMOVED" and v.storages
            else {}
        ),
    }


def _storage_change(job: Job, s: StorageResource, change: str) -> dict[str, Any]:
    return {
        "id": s.id,
        "virtualStorageDescId": s.virtual_storage_desc_id,
        "changeType": change,
        "storageResource": {"vimConnectionId": job.inst.vim_connection_id, "resourceId": s.volume_id,
                            "vimLevelResourceType": "OS::Cinder::Volume"},
    }
