"""Scheduled etcd backups: one row per instantiated instance (who backs it up next, when, the
latest attempt and the latest successful backup with its restore drill).

Revision ID: 0013
Revises: 0008
Create Date: 2026-11-26 03:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "etcd_backups",
        sa.Column("instance_id", sa.String(255), nullable=False),
        sa.Column("next_at", sa.Float(), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("last", sa.JSON(), nullable=True),
        sa.Column("last_ok", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["instance_id"], ["vnf_instances.id"], ondelete="CASCADE",
                                name="fk_etcd_backups_instance_id_vnf_instances"),
        sa.PrimaryKeyConstraint("instance_id", name="pk_etcd_backups"),
    )
    op.create_index("ix_etcd_backups_next_at", "etcd_backups", ["next_at"])


def downgrade() -> None:
    op.drop_index("ix_etcd_backups_next_at", table_name="etcd_backups")
    op.drop_table("etcd_backups")
