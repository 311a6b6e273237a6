"""Fencing of occurrence owners: an `epoch` column on vnf_lcm_op_occs, bumped whenever an
occurrence gets an owner (a takeover, a retry, a rollback). A runner's writes are conditional on
the owner and epoch it started with, so a process that lost its occurrence while paused changes
nothing when it resumes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 00:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("vnf_lcm_op_occs") as batch:
        batch.add_column(sa.Column("epoch", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("vnf_lcm_op_occs") as batch:
        batch.drop_column("epoch")
