"""The certificate expiry watch: one row per instantiated instance (who checks it next, when, the
earliest notAfter of each of its cluster's certificates, what was warned about / renewed).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "certificate_watch",
        sa.Column("instance_id", sa.String(255), nullable=False),
        sa.Column("next_check", sa.Float(), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("certs", sa.JSON(), nullable=True),
        sa.Column("warned_for", sa.Float(), nullable=True),
        sa.Column("renew_for", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["instance_id"], ["vnf_instances.id"], ondelete="CASCADE",
                                name="fk_certificate_watch_instance_id_vnf_instances"),
        sa.PrimaryKeyConstraint("instance_id", name="pk_certificate_watch"),
    )
    op.create_index("ix_certificate_watch_next_check", "certificate_watch", ["next_check"])


def downgrade() -> None:
    op.drop_index("ix_certificate_watch_next_check", table_name="certificate_watch")
    op.drop_table("certificate_watch")
