"""Every step family's SSH handlers: a new family adds its module here."""

from __future__ import annotations

from collections.abc import Mapping

from vnfm.adapters.nodes.ssh import (
    backup,
    certs,
    etcd,
    hosts,
    kubeadm,
    kubernetes,
    kubespray,
    lb,
    registry,
    registry_vnf,
    restore,
    storage,
    upgrade,
)
from vnfm.adapters.nodes.ssh.base import Handler

ALL_HANDLERS: Mapping[type, Handler] = {
    **etcd.HANDLERS,
    **lb.HANDLERS,
    **hosts.HANDLERS,
    **storage.HANDLERS,
    **registry.HANDLERS,
    **registry_vnf.HANDLERS,
    **kubernetes.HANDLERS,
    **kubeadm.HANDLERS,
    **kubespray.HANDLERS,
    **certs.HANDLERS,
    **upgrade.HANDLERS,
    **backup.HANDLERS,
    **restore.HANDLERS,
}
