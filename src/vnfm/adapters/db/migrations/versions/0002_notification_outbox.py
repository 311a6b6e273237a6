"""Notification outbox: notifications are stored with the state change they report and deleted
once delivered, so a crash loses none.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = 255


def upgrade() -> None:
    op.create_table(
        "notification_outbox",
        sa.Column("id", sa.String(ID), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner", sa.String(ID), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_notification_outbox"),
    )
    for col in ("created_at", "owner", "claimed_at"):
        op.create_index(f"ix_notification_outbox_{col}", "notification_outbox", [col])


def downgrade() -> None:
    op.drop_table("notification_outbox")
