"""Reading approved memories: lists, groups, the session briefing, counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, case, func, select
from sqlalchemy.engine import Connection

from memvet.memory.kinds import Kind
from memvet.memory.records import Memory, Page, memory_from_row
from memvet.memory.store import tables
from memvet.memory.store.candidates import page


def list_memories(
    conn: Connection,
    *,
    namespaces: Sequence[str] | None,
    kinds: Sequence[Kind] | None,
    offset: int,
    limit: int,
) -> Page[Memory]:
    m = tables.memories.c
    where: list[Any] = []
    if namespaces is not None:
        where.append(m.namespace.in_(list(namespaces)))
    if kinds:
        where.append(m.kind.in_([k.value for k in kinds]))
    query = select(tables.memories).where(and_(True, *where)).order_by(
        m.namespace, m.approved_at.desc(), m.id
    )
    count = select(func.count()).select_from(tables.memories).where(and_(True, *where))
    return page(conn, query, count, offset, limit, memory_from_row)


BRIEFING_KIND_ORDER = ("decision", "postmortem", "preference", "fact", "pattern", "event")


def briefing(conn: Connection, namespaces: Sequence[str], limit: int) -> list[Memory]:
    """Approved memories most worth knowing first: decisions and postmortems, then the most
    observed, then the newest."""
    m = tables.memories.c
    rank = case({k: i for i, k in enumerate(BRIEFING_KIND_ORDER)}, value=m.kind, else_=99)
    rows = conn.execute(
        select(tables.memories)
        .where(m.namespace.in_(list(namespaces)))
        .order_by(rank, m.observations.desc(), m.approved_at.desc(), m.id)
        .limit(limit)
    ).mappings()
    return [memory_from_row(r) for r in rows]


def get_memory(conn: Connection, memory_id: str) -> Memory | None:
    row = conn.execute(
        select(tables.memories).where(tables.memories.c.id == memory_id)
    ).mappings().first()
    return memory_from_row(row) if row else None


def get_memories(conn: Connection, ids: Sequence[str]) -> dict[str, Memory]:
    if not ids:
        return {}
    rows = conn.execute(select(tables.memories).where(tables.memories.c.id.in_(list(ids))))
    return {r.id: memory_from_row(r._mapping) for r in rows}


def memory_for_candidate(conn: Connection, candidate_id: str) -> Memory | None:
    row = conn.execute(
        select(tables.memories).where(tables.memories.c.candidate_id == candidate_id)
    ).mappings().first()
    return memory_from_row(row) if row else None


def memory_namespaces(conn: Connection) -> list[str]:
    m = tables.memories.c
    return [r[0] for r in conn.execute(select(m.namespace).distinct().order_by(m.namespace))]


def memory_counts(conn: Connection) -> dict[str, int]:
    m = tables.memories.c
    rows = conn.execute(select(m.namespace, func.count()).group_by(m.namespace))
    return {ns: int(n) for ns, n in rows}




def indexable(conn: Connection) -> list[tuple[str, str, Kind, str]]:
    """(id, namespace, kind, content) of every memory: what the recall index must hold."""
    m = tables.memories.c
    rows = conn.execute(select(m.id, m.namespace, m.kind, m.content))
    return [(r.id, r.namespace, Kind(r.kind), r.content) for r in rows]
