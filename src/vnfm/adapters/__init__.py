"""Adapters: implementations of the service ports (database, VIMs, management drivers, ...)."""
