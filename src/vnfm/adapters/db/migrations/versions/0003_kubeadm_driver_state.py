"""The Kubernetes cluster driver is now called `kubeadm` (a Kubernetes-VIM infrastructure driver and
a Kubespray driver are coming): its per-instance state moves from driver_state["kubernetes"] to
driver_state["kubeadm"].

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

OLD, NEW = "kubernetes", "kubeadm"


def _rename(old: str, new: str) -> None:
    table = sa.table("vnf_instances", sa.column("id", sa.String()), sa.column("body", sa.JSON()))
    conn = op.get_bind()
    for row in conn.execute(sa.select(table.c.id, table.c.body)).all():
        body = dict(row.body or {})
        state = dict(body.get("driver_state") or {})
        if old not in state or new in state:
            continue
        state[new] = state.pop(old)
        body["driver_state"] = state
        conn.execute(table.update().where(table.c.id == row.id).values(body=body))


def upgrade() -> None:
    _rename(OLD, NEW)


def downgrade() -> None:
    _rename(NEW, OLD)
