"""Schema migrations (Alembic, scripts inside the package) applied programmatically.

`migrate(url)` upgrades to head; no alembic.ini is needed. Several processes may start at once:
the whole upgrade runs in one transaction that first takes a lock (PostgreSQL: a transaction-level
advisory lock; SQLite: `BEGIN IMMEDIATE`, i.e. the database write lock, waited for up to the busy
timeout), so the later ones find the schema already at head and do nothing.
"""

from __future__ import annotations

import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from vnfm.adapters.db.engine import make_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# pg_advisory_xact_lock key: "vnfm" in ASCII.
PG_MIGRATION_LOCK_KEY = 0x766E666D

_process_lock = threading.Lock()  # alembic's `op`/`context` proxies are module-global


def alembic_config() -> Config:
    """An Alembic Config built in code, pointing at the package's migration scripts."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(url: str | URL | Engine | None = None) -> str | None:
    engine = url if isinstance(url, Engine) else make_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        if engine is not url:
            engine.dispose()


def migrate(url: str | URL | Engine | None = None, revision: str = "head") -> None:
    """Upgrade the database at `url` (default: VNFM_DATABASE_URL, else SQLite in ./var) to `revision`."""
    engine = url if isinstance(url, Engine) else make_engine(url)
    try:
        with _process_lock, engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_MIGRATION_LOCK_KEY})
            cfg = alembic_config()
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    finally:
        if engine is not url:
            engine.dispose()
