"""The index outbox: what the recall index owes, written in the same transaction as the change
and cleared once the index has applied it (a crash in between leaves the row, and
reconciliation finishes the job)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection

from memvet.memory.store import tables


@dataclass(frozen=True)
class Owed:
    id: int
    memory_id: str
    namespace: str
    op: str  # upsert | delete


def add(conn: Connection, memory_id: str, namespace: str, op: str, now: datetime) -> None:
    conn.execute(insert(tables.index_outbox).values(
        memory_id=memory_id, namespace=namespace, op=op, created_at=now))


def owed(conn: Connection, limit: int) -> list[Owed]:
    """The oldest rows first."""
    o = tables.index_outbox.c
    rows = conn.execute(select(o.id, o.memory_id, o.namespace, o.op).order_by(o.id).limit(limit))
    return [Owed(int(r.id), r.memory_id, r.namespace, r.op) for r in rows]


def last_id(conn: Connection) -> int | None:
    value = conn.execute(select(func.max(tables.index_outbox.c.id))).scalar()
    return int(value) if value is not None else None


def clear_through(conn: Connection, last: int) -> None:
    conn.execute(delete(tables.index_outbox).where(tables.index_outbox.c.id <= last))


def count(conn: Connection) -> int:
    """How many rows are owed."""
    return int(conn.execute(select(func.count()).select_from(tables.index_outbox)).scalar_one())
