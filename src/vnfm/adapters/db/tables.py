"""The database schema (SQLAlchemy Core tables).

Every entity table has a few indexed scalar columns (what is queried or updated conditionally) and
a JSON `body` with the whole entity (see vnfm.adapters.db.mappers). Columns that are changed by
conditional updates (lock_op_id, owner, epoch, heartbeat) are authoritative; the body is kept in sync.

Any change here needs a new migration in migrations/versions/ (tests compare the two).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
)
from sqlalchemy.types import TypeDecorator

from vnfm.domain.access import DEFAULT_TENANT

NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

ID = 255  # ids are UUIDs, but VIM ids and the like may be chosen by users
TENANT = 64  # the owner of packages, instances, occurrences, subscriptions and VIMs (migration 0007)


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend.

    PostgreSQL stores `timestamptz`; SQLite stores naive UTC text (which then sorts and compares
    correctly as text). Values read back are always aware and in UTC; naive input is taken as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if dialect.name == "sqlite":
            value = value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # raw text from SQLite (e.g. through a func result)
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


vnf_packages = Table(
    "vnf_packages",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("onboarding_state", String(32), nullable=False, index=True),
    Column("operational_state", String(32), nullable=False, index=True),
    Column("usage_state", String(32), nullable=False, index=True),
    Column("vnfd_id", String(ID), nullable=True, index=True),
    Column("created_at", UtcDateTime(), nullable=False, index=True),
    Column("tenant", String(TENANT), nullable=False, server_default=DEFAULT_TENANT, index=True),
    Column("body", JSON(), nullable=False),
)

vnf_package_contents = Table(
    "vnf_package_contents",
    metadata,
    Column("pkg_id", String(ID), ForeignKey("vnf_packages.id", ondelete="CASCADE"), primary_key=True),
    Column("size", BigInteger(), nullable=False),
    Column("content", LargeBinary(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
)

vnf_instances = Table(
    "vnf_instances",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("vnfd_id", String(ID), nullable=False, index=True),
    Column("vnf_pkg_id", String(ID), nullable=False, index=True),
    Column("vnf_instance_name", String(ID), nullable=True, index=True),
    Column("instantiation_state", String(32), nullable=False, index=True),
    Column("vim_id", String(ID), nullable=True, index=True),
    Column("lock_op_id", String(ID), nullable=True, index=True),
    Column("created_at", UtcDateTime(), nullable=False, index=True),
    Column("tenant", String(TENANT), nullable=False, server_default=DEFAULT_TENANT, index=True),
    Column("body", JSON(), nullable=False),
)

# No foreign key to vnf_instances: occurrences outlive the instance they worked on.
vnf_lcm_op_occs = Table(
    "vnf_lcm_op_occs",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("vnf_instance_id", String(ID), nullable=False, index=True),
    Column("operation", String(32), nullable=False, index=True),
    Column("operation_state", String(32), nullable=False, index=True),
    Column("state_entered_time", UtcDateTime(), nullable=False, index=True),
    Column("start_time", UtcDateTime(), nullable=False, index=True),
    Column("owner", String(ID), nullable=True, index=True),
    # Fencing token: bumped by every change of owner; a runner's writes check it (and the owner).
    Column("epoch", Integer(), nullable=False, server_default="0"),
    Column("heartbeat", UtcDateTime(), nullable=True, index=True),
    # The mode of a pending cancel (NULL: none): read by the heartbeat with no body decoding.
    Column("cancel_mode", String(16), nullable=True),
    Column("tenant", String(TENANT), nullable=False, server_default=DEFAULT_TENANT, index=True),
    Column("body", JSON(), nullable=False),
)

subscriptions = Table(
    "subscriptions",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("kind", String(32), nullable=False, index=True),
    Column("callback_uri", String(4096), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False, index=True),
    Column("tenant", String(TENANT), nullable=False, server_default=DEFAULT_TENANT, index=True),
    Column("body", JSON(), nullable=False),
)

vims = Table(
    "vims",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("vim_type", String(64), nullable=False, index=True),
    Column("name", String(ID), nullable=False, index=True),
    Column("is_default", Boolean(), nullable=False, index=True),
    Column("created_at", UtcDateTime(), nullable=False, index=True),
    Column("tenant", String(TENANT), nullable=False, server_default=DEFAULT_TENANT, index=True),
    Column("body", JSON(), nullable=False),
)

# Notifications waiting for delivery (transactional outbox): written in the transaction that
# changes the state they report, deleted once every subscriber got it or was given up on.
# `owner`: the process that wrote it delivers it; `claimed_at`: when a notifier took it (a row
# claimed or written long ago by a process that died is taken over by another).
notification_outbox = Table(
    "notification_outbox",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("created_at", UtcDateTime(), nullable=False, index=True),
    Column("owner", String(ID), nullable=True, index=True),
    Column("claimed_at", UtcDateTime(), nullable=True, index=True),
    Column("body", JSON(), nullable=False),
)

# Free-form state for other adapters (e.g. the simulated cloud), one JSON value per key.
kv = Table(
    "kv",
    metadata,
    Column("namespace", String(128), primary_key=True),
    Column("key", String(ID), primary_key=True),
    Column("value", JSON(), nullable=True),
    Column("updated_at", UtcDateTime(), nullable=False),
)

# SOL003 fault management (migration 0008): one row per alarm; `cleared` false while open (at most
# one open alarm per VNFC: the watcher that holds the instance's lease raises and clears them).
alarms = Table(
    "alarms",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("managed_object_id", String(ID), nullable=False, index=True),
    Column("vnfc_id", String(ID), nullable=False, index=True),
    Column("perceived_severity", String(32), nullable=False, index=True),
    Column("event_type", String(32), nullable=False, index=True),
    Column("probable_cause", String(ID), nullable=False, index=True),
    Column("ack_state", String(32), nullable=False, index=True),
    Column("cleared", Boolean(), nullable=False, index=True),
    Column("alarm_raised_time", UtcDateTime(), nullable=False, index=True),
    Column("tenant", String(TENANT), nullable=False, server_default=DEFAULT_TENANT, index=True),
    Column("body", JSON(), nullable=False),
)

# Who watches the health of which instance (migration 0008): a lease per instance, renewed by its
# holder, taken by another process once `expires_at` passed. `state`: the holder's bookkeeping
# kept across takeovers (since when each VNFC is unhealthy, the recent automatic heals).
watch_leases = Table(
    "watch_leases",
    metadata,
    Column("instance_id", String(ID), primary_key=True),
    Column("owner", String(ID), nullable=False, index=True),
    Column("expires_at", UtcDateTime(), nullable=False, index=True),
    Column("state", JSON(), nullable=False),
)

# A composite index for the orphan scan (state + heartbeat).
Index("ix_vnf_lcm_op_occs_state_heartbeat", vnf_lcm_op_occs.c.operation_state, vnf_lcm_op_occs.c.heartbeat)

# List order (keyset paging: ORDER BY <time>, id, then rows after the last one's key); migration 0004.
Index("ix_vnf_packages_created_at_id", vnf_packages.c.created_at, vnf_packages.c.id)
Index("ix_vnf_instances_created_at_id", vnf_instances.c.created_at, vnf_instances.c.id)
Index("ix_vnf_lcm_op_occs_start_time_id", vnf_lcm_op_occs.c.start_time, vnf_lcm_op_occs.c.id)
Index("ix_subscriptions_kind_created_at_id", subscriptions.c.kind, subscriptions.c.created_at, subscriptions.c.id)
Index("ix_alarms_alarm_raised_time_id", alarms.c.alarm_raised_time, alarms.c.id)

# Scheduled etcd backups (service/backups.py, migration 0013): one row per instantiated instance,
# claimed by one conditional UPDATE of `next_at` (one process backs up a given instance per period);
# `last`: the latest attempt's record, `last_ok`: the latest successful backup's (size, keys, digest,
# the restore drill's outcome), read by the metrics and the API.
etcd_backups = Table(
    "etcd_backups",
    metadata,
    Column("instance_id", String(ID), ForeignKey("vnf_instances.id", ondelete="CASCADE"), primary_key=True),
    Column("next_at", Float(), nullable=False, index=True),
    Column("owner", String(ID), nullable=True),
    Column("last", JSON(), nullable=True),
    Column("last_ok", JSON(), nullable=True),
)
