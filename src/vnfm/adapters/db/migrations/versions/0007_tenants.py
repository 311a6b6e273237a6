"""Tenants: packages, instances, occurrences, subscriptions and VIMs belong to one (`tenant`
column, indexed); what existed before belongs to the `default` tenant.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TABLES = ("vnf_packages", "vnf_instances", "vnf_lcm_op_occs", "subscriptions", "vims")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("tenant", sa.String(64), nullable=False, server_default="default"))
            batch.create_index(f"ix_{table}_tenant", ["tenant"])


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_index(f"ix_{table}_tenant")
            batch.drop_column("tenant")
