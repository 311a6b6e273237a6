"""Database adapter: SQLAlchemy 2 unit of work over SQLite (default) or PostgreSQL (psycopg 3).

    migrate(url)                      # create / upgrade the schema (safe with concurrent starts)
    factory = make_session_factory(url)
    with SqlAlchemyUnitOfWork(factory) as uow:
        uow.instances.add(inst)
        uow.commit()
"""

from vnfm.adapters.db.engine import (
    DB_ERRORS,
    DEFAULT_DATABASE_URL,
    DbLimits,
    database_url_from_env,
    is_busy,
    make_engine,
    make_session_factory,
    normalize_url,
    ping,
    ping_url,
)
from vnfm.adapters.db.kv import SqlKvStore
from vnfm.adapters.db.migrate import current_revision, head_revision, migrate
from vnfm.adapters.db.stats import FleetCounts, fleet_counts
from vnfm.adapters.db.tables import metadata
from vnfm.adapters.db.uow import (
    SqlAlchemyUnitOfWork,
    SqlInstanceRepository,
    SqlOpOccRepository,
    SqlPackageRepository,
    SqlSubscriptionRepository,
    SqlVimRepository,
)

__all__ = [
    "FleetCounts",
    "fleet_counts",
    "ping",
    "ping_url",
    "DB_ERRORS",
    "DEFAULT_DATABASE_URL",
    "DbLimits",
    "is_busy",
    "SqlAlchemyUnitOfWork",
    "SqlInstanceRepository",
    "SqlKvStore",
    "SqlOpOccRepository",
    "SqlPackageRepository",
    "SqlSubscriptionRepository",
    "SqlVimRepository",
    "current_revision",
    "database_url_from_env",
    "head_revision",
    "make_engine",
    "make_session_factory",
    "metadata",
    "migrate",
    "normalize_url",
]
