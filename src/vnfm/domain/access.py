"""Who is calling: a principal (subject, tenant, roles) and what each role may do.

Roles are ordered: a reader reads, an operator also changes (packages, instances, LCM tasks, VIMs,
subscriptions), an admin also reaches the simulator and crosses tenants."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

Role = Literal["reader", "operator", "admin"]
ROLES: tuple[Role, ...] = ("reader", "operator", "admin")
DEFAULT_TENANT = "default"


def role_rank(role: str) -> int:
    """0 for reader ... 2 for admin; -1 for a name that is no role."""
    return ROLES.index(role) if role in ROLES else -1


@dataclass(frozen=True)
class Principal:
    subject: str
    tenant: str
    roles: frozenset[str] = field(default_factory=frozenset)
    # how the caller proved who it is: "anonymous" (no authentication configured), "static-token",
    # "oauth2" (a token of the built-in server), "jwt" (an external issuer), "introspection", "mtls"
    method: str = "anonymous"

    def has(self, needed: str) -> bool:
        """True when one of the roles is `needed` or above it."""
        want = role_rank(needed)
        return want >= 0 and any(role_rank(r) >= want for r in self.roles)

    @property
    def is_admin(self) -> bool:
        return self.has("admin")


ANONYMOUS = Principal(subject="anonymous", tenant=DEFAULT_TENANT, roles=frozenset({"admin"}))


# The caller of the request being served (set by the API's gate; None outside requests: the LCM
# engine, the notifier, start-up). Repositories read it to confine what a caller sees.
CALLER: ContextVar[Principal | None] = ContextVar("vnfm_caller", default=None)


def tenant_scope() -> str | None:
    """The tenant the current caller is confined to; None: every tenant (an admin, or no caller)."""
    caller = CALLER.get()
    return None if caller is None or caller.is_admin else caller.tenant


def caller_tenant() -> str:
    """The tenant new resources of the current caller belong to."""
    caller = CALLER.get()
    return caller.tenant if caller is not None else DEFAULT_TENANT


def is_caller_confined() -> bool:
    return tenant_scope() is not None


@contextmanager
def unscoped() -> Iterator[None]:
    """Look past the caller's tenant (for a check that must see every tenant, e.g. a free id)."""
    token = CALLER.set(None)
    try:
        yield
    finally:
        CALLER.reset(token)
