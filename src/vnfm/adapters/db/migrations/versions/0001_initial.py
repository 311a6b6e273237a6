"""Initial schema: packages (+ contents), instances, LCM operation occurrences, subscriptions,
VIMs and the key/value table.

Revision ID: 0001
Revises:
Create Date: 2024-01-01 00:00:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = 255


def _ts(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _indexes(table: str, *columns: str) -> None:
    for col in columns:
        op.create_index(f"ix_{table}_{col}", table, [col])


def upgrade() -> None:
    op.create_table(
        "vnf_packages",
        sa.Column("id", sa.String(ID), nullable=False),
        sa.Column("onboarding_state", sa.String(32), nullable=False),
        sa.Column("operational_state", sa.String(32), nullable=False),
        sa.Column("usage_state", sa.String(32), nullable=False),
        sa.Column("vnfd_id", sa.String(ID), nullable=True),
        _ts("created_at"),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vnf_packages"),
    )
    _indexes("vnf_packages", "onboarding_state", "operational_state", "usage_state", "vnfd_id", "created_at")

    op.create_table(
        "vnf_package_contents",
        sa.Column("pkg_id", sa.String(ID), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        _ts("updated_at"),
        sa.ForeignKeyConstraint(["pkg_id"], ["vnf_packages.id"], ondelete="CASCADE",
                                name="fk_vnf_package_contents_pkg_id_vnf_packages"),
        sa.PrimaryKeyConstraint("pkg_id", name="pk_vnf_package_contents"),
    )

    op.create_table(
        "vnf_instances",
        sa.Column("id", sa.String(ID), nullable=False),
        sa.Column("vnfd_id", sa.String(ID), nullable=False),
        sa.Column("vnf_pkg_id", sa.String(ID), nullable=False),
        sa.Column("vnf_instance_name", sa.String(ID), nullable=True),
        sa.Column("instantiation_state", sa.String(32), nullable=False),
        sa.Column("vim_id", sa.String(ID), nullable=True),
        sa.Column("lock_op_id", sa.String(ID), nullable=True),
        _ts("created_at"),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vnf_instances"),
    )
    _indexes("vnf_instances", "vnfd_id", "vnf_pkg_id", "instantiation_state", "vim_id", "lock_op_id",
             "created_at")

    op.create_table(
        "vnf_lcm_op_occs",
        sa.Column("id", sa.String(ID), nullable=False),
        sa.Column("vnf_instance_id", sa.String(ID), nullable=False),
        sa.Column("operation", sa.String(32), nullable=False),
        sa.Column("operation_state", sa.String(32), nullable=False),
        _ts("state_entered_time"),
        _ts("start_time"),
        sa.Column("owner", sa.String(ID), nullable=True),
        _ts("heartbeat", nullable=True),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vnf_lcm_op_occs"),
    )
    _indexes("vnf_lcm_op_occs", "vnf_instance_id", "operation_state", "start_time", "owner", "heartbeat")
    op.create_index("ix_vnf_lcm_op_occs_state_heartbeat", "vnf_lcm_op_occs", ["operation_state", "heartbeat"])

    op.create_table(
        "subscriptions",
        sa.Column("id", sa.String(ID), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("callback_uri", sa.String(4096), nullable=False),
        _ts("created_at"),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_subscriptions"),
    )
    _indexes("subscriptions", "kind", "created_at")

    op.create_table(
        "vims",
        sa.Column("id", sa.String(ID), nullable=False),
        sa.Column("vim_type", sa.String(64), nullable=False),
        sa.Column("name", sa.String(ID), nullable=False),
        sa.Column("is_default", sa.Boolean(), nullable=False),
        _ts("created_at"),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vims"),
    )
    _indexes("vims", "vim_type", "name", "is_default", "created_at")

    op.create_table(
        "kv",
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("key", sa.String(ID), nullable=False),
        sa.Column("value", sa.JSON(), nullable=True),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("namespace", "key", name="pk_kv"),
    )


def downgrade() -> None:
    for table in ("kv", "vims", "subscriptions", "vnf_lcm_op_occs", "vnf_instances", "vnf_package_contents",
                  "vnf_packages"):
        op.drop_table(table)
