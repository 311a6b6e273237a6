"""SOL003 fault management: `alarms` (one row per alarm, indexed filter columns, the Alarm in
`body`) and `watch_leases` (which process watches the health of which instance, until when).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 02:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

ALARM_INDEXED = ("managed_object_id", "vnfc_id", "perceived_severity", "event_type", "probable_cause", "ack_state",
                 "cleared", "alarm_raised_time", "tenant")


def upgrade() -> None:
    op.create_table(
        "alarms",
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("managed_object_id", sa.String(255), nullable=False),
        sa.Column("vnfc_id", sa.String(255), nullable=False),
        sa.Column("perceived_severity", sa.String(32), nullable=False),
        sa.Column("event_type", sa.String(32), nullable=False),
        sa.Column("probable_cause", sa.String(255), nullable=False),
        sa.Column("ack_state", sa.String(32), nullable=False),
        sa.Column("cleared", sa.Boolean(), nullable=False),
        sa.Column("alarm_raised_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False, server_default="default"),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_alarms"),
    )
    for col in ALARM_INDEXED:
        op.create_index(f"ix_alarms_{col}", "alarms", [col])
    op.create_index("ix_alarms_alarm_raised_time_id", "alarms", ["alarm_raised_time", "id"])
    op.create_table(
        "watch_leases",
        sa.Column("instance_id", sa.String(255), nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("instance_id", name="pk_watch_leases"),
    )
    op.create_index("ix_watch_leases_owner", "watch_leases", ["owner"])
    op.create_index("ix_watch_leases_expires_at", "watch_leases", ["expires_at"])


def downgrade() -> None:
    op.drop_table("watch_leases")
    op.drop_table("alarms")
