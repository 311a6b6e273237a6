"""Every step family's twin handlers: a new family adds its module here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vnfm.adapters.infra.simulator.twin import (
    backup,
    certs,
    cluster,
    control_plane,
    etcd,
    hosts,
    kubespray,
    kubespray_nodes,
    lb,
    registry,
    registry_vnf,
    restore,
    storage,
    upgrade,
)

ALL_HANDLERS: Mapping[type, Any] = {
    **cluster.HANDLERS,
    **etcd.HANDLERS,
    **control_plane.HANDLERS,
    **hosts.HANDLERS,
    **registry.HANDLERS,
    **registry_vnf.HANDLERS,
    **storage.HANDLERS,
    **kubespray_nodes.HANDLERS,
    **lb.HANDLERS,
    **certs.HANDLERS,
    **upgrade.HANDLERS,
    **backup.HANDLERS,
    **restore.HANDLERS,  # after cluster's: its KubeadmInit also restores
}
# steps that run on operator hosts (outside the VNF, e.g. the Ansible server: twin/operator.py)
OPERATOR_HANDLERS: Mapping[type, Any] = {
    **kubespray.HANDLERS,
}
