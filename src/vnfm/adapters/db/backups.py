"""The etcd backup schedule's table (`etcd_backups`, migration 0013): claiming instances due for a
backup, recording what a backup did, and the metrics' read. Each statement runs on its own
autocommit connection: a claim is one conditional write whose row count says whether this process
won the instance (one process backs up a given instance per period, as the certificate watch)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from vnfm.adapters.db.tables import etcd_backups as B
from vnfm.adapters.db.tables import vnf_instances as I

INSTANTIATED = "INSTANTIATED"


class SqlBackupSchedule:
    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.engine = factory.kw["bind"]

    def _conn(self) -> Any:
        return self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def claim(self, owner: str, now: float, lease: float, limit: int = 50) -> list[str]:
        """Instantiated instances due (never seen, or `next_at` passed), each taken by one conditional
        write that moves its `next_at` a lease on; those another process won are left out. Rows of
        instances no longer instantiated are dropped."""
        due = select(I.c.id, B.c.instance_id).select_from(I.outerjoin(B, B.c.instance_id == I.c.id)).where(
            I.c.instantiation_state == INSTANTIATED, or_(B.c.instance_id.is_(None), B.c.next_at <= now)
        ).order_by(B.c.next_at).limit(limit)
        out: list[str] = []
        with self._conn() as conn:
            conn.execute(delete(B).where(B.c.instance_id.not_in(
                select(I.c.id).where(I.c.instantiation_state == INSTANTIATED))))
            for inst_id, known in conn.execute(due).all():
                if self._take(conn, inst_id, known is not None, owner, now, lease):
                    out.append(inst_id)
        return out

    @staticmethod
    def _take(conn: Connection, inst_id: str, known: bool, owner: str, now: float, lease: float) -> bool:
        if not known:
            try:
                conn.execute(insert(B).values(instance_id=inst_id, next_at=now + lease, owner=owner))
                return True
            except IntegrityError:  # another process inserted it first: it backs this one up
                return False
        res = conn.execute(update(B).where(and_(B.c.instance_id == inst_id, B.c.next_at <= now))
                           .values(next_at=now + lease, owner=owner))
        return bool(res.rowcount == 1)

    def record(self, inst_id: str, next_at: float, result: dict[str, Any] | None) -> None:
        values: dict[str, Any] = {"next_at": next_at}
        if result is not None:
            values["last"] = result
            if result.get("ok"):
                values["last_ok"] = result
        with self._conn() as conn:
            conn.execute(update(B).where(B.c.instance_id == inst_id).values(**values))

    def get(self, inst_id: str) -> dict[str, Any] | None:
        with self._conn() as conn:
            row = conn.execute(select(B.c.next_at, B.c.owner, B.c.last, B.c.last_ok)
                               .where(B.c.instance_id == inst_id)).first()
        return dict(row._mapping) if row is not None else None

    def all_recorded(self) -> list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
        """(instance id, latest attempt, latest success) of every instance with a backup recorded."""
        with self._conn() as conn:
            rows = conn.execute(select(B.c.instance_id, B.c.last, B.c.last_ok).where(B.c.last.is_not(None))).all()
        return [(r[0], r[1], r[2]) for r in rows]
