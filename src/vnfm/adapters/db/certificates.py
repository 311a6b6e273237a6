"""The certificate expiry watch's table (`certificate_watch`, migration 0010): claiming instances
for a check, recording what a check found, and the metric's read. Each statement runs on its own
autocommit connection: a claim is one conditional write whose row count says whether this process
won the instance (every process sharing the database calls `claim`; one checks a given instance
per period)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, and_, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from vnfm.adapters.db.tables import certificate_watch as W
from vnfm.adapters.db.tables import vnf_instances as I
from vnfm.domain.certificates import WatchRow

INSTANTIATED = "INSTANTIATED"


class SqlCertificateWatch:
    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.engine = factory.kw["bind"]

    def _conn(self) -> Any:
        return self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def claim(self, owner: str, now: float, every: float, limit: int = 100) -> list[WatchRow]:
        """Instantiated instances due for a check (never checked, or `next_check` passed), each
        taken by one conditional write that moves its `next_check` a period on; those whose write
        another process won are left out. Rows of instances no longer instantiated are dropped."""
        due = select(I.c.id, W.c.instance_id, W.c.warned_for, W.c.renew_for).select_from(
            I.outerjoin(W, W.c.instance_id == I.c.id)).where(
            I.c.instantiation_state == INSTANTIATED, or_(W.c.instance_id.is_(None), W.c.next_check <= now)
        ).limit(limit)
        out: list[WatchRow] = []
        with self._conn() as conn:
            conn.execute(delete(W).where(W.c.instance_id.not_in(
                select(I.c.id).where(I.c.instantiation_state == INSTANTIATED))))
            for inst_id, known, warned, renew in conn.execute(due).all():
                if self._take(conn, inst_id, known is not None, owner, now, every):
                    out.append(WatchRow(inst_id, warned, renew))
        return out

    @staticmethod
    def _take(conn: Connection, inst_id: str, known: bool, owner: str, now: float, every: float) -> bool:
        if not known:
            try:
                conn.execute(insert(W).values(instance_id=inst_id, next_check=now + every, owner=owner))
                return True
            except IntegrityError:  # another process inserted it first: it checks this one
                return False
        res = conn.execute(update(W).where(and_(W.c.instance_id == inst_id, W.c.next_check <= now))
                           .values(next_check=now + every, owner=owner))
        return bool(res.rowcount == 1)

    def record(self, inst_id: str, certs: Mapping[str, float], *, warned_for: float | None = None,
               renew_for: float | None = None, next_check: float | None = None) -> None:
        """What a check found; `next_check`: check it again then (sooner than its period)."""
        values: dict[str, Any] = {"certs": dict(certs)}
        if next_check is not None:
            values["next_check"] = next_check
        if warned_for is not None:
            values["warned_for"] = warned_for
        if renew_for is not None:
            values["renew_for"] = renew_for
        with self._conn() as conn:
            conn.execute(update(W).where(W.c.instance_id == inst_id).values(**values))
