"""A `cancel_mode` column on vnf_lcm_op_occs (NULL unless a cancel is pending), so the heartbeat
statement returns the FORCEFUL cancels of a process's occurrences without decoding bodies.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

ACTIVE = ("STARTING", "PROCESSING", "ROLLING_BACK")


def upgrade() -> None:
    with op.batch_alter_table("vnf_lcm_op_occs") as batch:
        batch.add_column(sa.Column("cancel_mode", sa.String(16), nullable=True))
    t = sa.table("vnf_lcm_op_occs", sa.column("id", sa.String()), sa.column("operation_state", sa.String()),
                 sa.column("cancel_mode", sa.String()), sa.column("body", sa.JSON()))
    bind = op.get_bind()
    rows = bind.execute(sa.select(t.c.id, t.c.body).where(t.c.operation_state.in_(ACTIVE))).all()
    for op_id, body in rows:  # occurrences still running: their pending cancel, from the body
        body = json.loads(body) if isinstance(body, str) else (body or {})
        if body.get("is_cancel_pending") and isinstance(body.get("cancel_mode"), str):
            bind.execute(sa.update(t).where(t.c.id == op_id).values(cancel_mode=body["cancel_mode"][:16]))


def downgrade() -> None:
    with op.batch_alter_table("vnf_lcm_op_occs") as batch:
        batch.drop_column("cancel_mode")
