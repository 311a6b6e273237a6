"""Alembic migration scripts of the vnfm database (run through vnfm.adapters.db.migrate)."""
