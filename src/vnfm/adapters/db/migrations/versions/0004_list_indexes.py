"""Indexes for lists in the database (issue 17): the filter columns that had none (operation,
stateEnteredTime, vnfInstanceName) and (time, id) for keyset paging in list order.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 19:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

INDEXES: list[tuple[str, str, list[str]]] = [
    ("ix_vnf_instances_vnf_instance_name", "vnf_instances", ["vnf_instance_name"]),
    ("ix_vnf_lcm_op_occs_operation", "vnf_lcm_op_occs", ["operation"]),
    ("ix_vnf_lcm_op_occs_state_entered_time", "vnf_lcm_op_occs", ["state_entered_time"]),
    ("ix_vnf_packages_created_at_id", "vnf_packages", ["created_at", "id"]),
    ("ix_vnf_instances_created_at_id", "vnf_instances", ["created_at", "id"]),
    ("ix_vnf_lcm_op_occs_start_time_id", "vnf_lcm_op_occs", ["start_time", "id"]),
    ("ix_subscriptions_kind_created_at_id", "subscriptions", ["kind", "created_at", "id"]),
]


def upgrade() -> None:
    for name, table, columns in INDEXES:
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, table, _ in reversed(INDEXES):
        op.drop_index(name, table_name=table)
