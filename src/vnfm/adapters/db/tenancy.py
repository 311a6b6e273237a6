"""Tenants in the tables (migration 0007): the tenant of an entity lives in its `tenant` column,
not in the JSON body the API shows; a caller confined to a tenant (domain.access.tenant_scope)
sees that tenant's rows only."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Table

from vnfm.domain.access import DEFAULT_TENANT, tenant_scope

E = TypeVar("E")
Row = dict[str, Any]


def with_tenant_column(to_row: Callable[[E], Row], from_row: Callable[[Mapping[str, Any]], E]
                       ) -> tuple[Callable[[E], Row], Callable[[Mapping[str, Any]], E]]:
    """`to_row` / `from_row` that also write and read the tenant column."""

    def to(entity: E) -> Row:
        return {**to_row(entity), "tenant": getattr(entity, "tenant", DEFAULT_TENANT)}

    def back(row: Mapping[str, Any]) -> E:
        entity = from_row(row)
        if "tenant" in row:
            entity.tenant = row["tenant"]  # type: ignore[attr-defined]
        return entity

    return to, back


def scope_of(table: Table) -> list[ColumnElement[bool]]:
    """The WHERE clause confining the current caller to its tenant's rows of `table` ([] when it
    is not confined, or the table has no tenants)."""
    tenant = tenant_scope() if "tenant" in table.c else None
    return [] if tenant is None else [table.c.tenant == tenant]
