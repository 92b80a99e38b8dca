"""Read-side queries: the queue, memories, groups, origins, transitions, turns, stats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, and_, case, func, select
from sqlalchemy.engine import Connection

from memvet.memory import store
from memvet.memory.kinds import Kind
from memvet.memory.records import (
    Candidate,
    Memory,
    Origin,
    Page,
    Source,
    Status,
    Transition,
    Turn,
    candidate_from_row,
    memory_from_row,
    origin_from_row,
    transition_from_row,
    turn_from_row,
)

CANDIDATE_ORDERS = {
    "newest": ("created_at", True),
    "oldest": ("created_at", False),
    "observations": ("observations", True),
    "confidence": ("confidence", True),
    "last_observed": ("last_observed_at", True),
}


@dataclass(frozen=True)
class CandidateFilter:
    statuses: Sequence[Status] | None = None
    namespaces: Sequence[str] | None = None  # None = all
    kinds: Sequence[Kind] | None = None
    sources: Sequence[Source] | None = None
    created_by: str | None = None
    order: str = "newest"


def _candidate_where(f: CandidateFilter) -> list[Any]:
    c = store.candidates.c
    where: list[Any] = []
    if f.statuses:
        where.append(c.status.in_([s.value for s in f.statuses]))
    if f.namespaces is not None:
        where.append(c.namespace.in_(list(f.namespaces)))
    if f.kinds:
        where.append(c.kind.in_([k.value for k in f.kinds]))
    if f.sources:
        where.append(c.source.in_([s.value for s in f.sources]))
    if f.created_by is not None:
        where.append(c.created_by == f.created_by)
    return where


def _page(conn: Connection, query: Select[Any], count: Select[Any], offset: int, limit: int,
          mapper: Any) -> Page[Any]:
    total = int(conn.execute(count).scalar_one())
    rows = conn.execute(query.offset(offset).limit(limit)).mappings().all()
    items = [mapper(r) for r in rows]
    return Page(items=items, total=total, offset=offset, has_next=offset + len(items) < total)


def list_candidates(
    conn: Connection, f: CandidateFilter, *, offset: int, limit: int
) -> Page[Candidate]:
    c = store.candidates.c
    where = _candidate_where(f)
    column, desc = CANDIDATE_ORDERS.get(f.order, CANDIDATE_ORDERS["newest"])
    col = getattr(c, column)
    query = select(store.candidates).where(and_(True, *where)).order_by(
        col.desc() if desc else col.asc(), c.id
    )
    count = select(func.count()).select_from(store.candidates).where(and_(True, *where))
    return _page(conn, query, count, offset, limit, candidate_from_row)


def get_candidate(conn: Connection, candidate_id: str) -> Candidate | None:
    row = conn.execute(
        select(store.candidates).where(store.candidates.c.id == candidate_id)
    ).mappings().first()
    return candidate_from_row(row) if row else None


def get_candidates(conn: Connection, ids: Sequence[str]) -> dict[str, Candidate]:
    if not ids:
        return {}
    rows = conn.execute(
        select(store.candidates).where(store.candidates.c.id.in_(list(ids)))
    ).mappings()
    return {r["id"]: candidate_from_row(r) for r in rows}


def list_memories(
    conn: Connection,
    *,
    namespaces: Sequence[str] | None,
    kinds: Sequence[Kind] | None,
    offset: int,
    limit: int,
) -> Page[Memory]:
    m = store.memories.c
    where: list[Any] = []
    if namespaces is not None:
        where.append(m.namespace.in_(list(namespaces)))
    if kinds:
        where.append(m.kind.in_([k.value for k in kinds]))
    query = select(store.memories).where(and_(True, *where)).order_by(
        m.namespace, m.approved_at.desc(), m.id
    )
    count = select(func.count()).select_from(store.memories).where(and_(True, *where))
    return _page(conn, query, count, offset, limit, memory_from_row)


BRIEFING_KIND_ORDER = ("decision", "postmortem", "preference", "fact", "pattern", "event")


def briefing(conn: Connection, namespaces: Sequence[str], limit: int) -> list[Memory]:
    """Approved memories most worth knowing first: decisions and postmortems, then the most
    observed, then the newest."""
    m = store.memories.c
    rank = case({k: i for i, k in enumerate(BRIEFING_KIND_ORDER)}, value=m.kind, else_=99)
    rows = conn.execute(
        select(store.memories)
        .where(m.namespace.in_(list(namespaces)))
        .order_by(rank, m.observations.desc(), m.approved_at.desc(), m.id)
        .limit(limit)
    ).mappings()
    return [memory_from_row(r) for r in rows]


def get_memory(conn: Connection, memory_id: str) -> Memory | None:
    row = conn.execute(
        select(store.memories).where(store.memories.c.id == memory_id)
    ).mappings().first()
    return memory_from_row(row) if row else None


def get_memories(conn: Connection, ids: Sequence[str]) -> dict[str, Memory]:
    if not ids:
        return {}
    rows = conn.execute(select(store.memories).where(store.memories.c.id.in_(list(ids))))
    return {r.id: memory_from_row(r._mapping) for r in rows}


def memory_for_candidate(conn: Connection, candidate_id: str) -> Memory | None:
    row = conn.execute(
        select(store.memories).where(store.memories.c.candidate_id == candidate_id)
    ).mappings().first()
    return memory_from_row(row) if row else None


def memory_namespaces(conn: Connection) -> list[str]:
    m = store.memories.c
    return [r[0] for r in conn.execute(select(m.namespace).distinct().order_by(m.namespace))]


def memory_counts(conn: Connection) -> dict[str, int]:
    m = store.memories.c
    rows = conn.execute(select(m.namespace, func.count()).group_by(m.namespace))
    return {ns: int(n) for ns, n in rows}


def status_counts(conn: Connection, namespaces: Sequence[str] | None) -> dict[str, int]:
    c = store.candidates.c
    query = select(c.status, func.count()).group_by(c.status)
    if namespaces is not None:
        query = query.where(c.namespace.in_(list(namespaces)))
    return {s: int(n) for s, n in conn.execute(query)}


def pending_by_namespace(conn: Connection, namespaces: Sequence[str] | None) -> dict[str, int]:
    c = store.candidates.c
    query = (
        select(c.namespace, func.count())
        .where(c.status == Status.PENDING.value)
        .group_by(c.namespace)
    )
    if namespaces is not None:
        query = query.where(c.namespace.in_(list(namespaces)))
    return {ns: int(n) for ns, n in conn.execute(query)}


def origins(conn: Connection, candidate_id: str) -> list[Origin]:
    o = store.origins.c
    rows = conn.execute(
        select(store.origins).where(o.candidate_id == candidate_id).order_by(o.created_at, o.id)
    ).mappings()
    return [origin_from_row(r) for r in rows]


def transitions(conn: Connection, candidate_id: str | None = None) -> list[Transition]:
    t = store.transitions.c
    query = select(store.transitions).order_by(t.id)
    if candidate_id is not None:
        query = query.where(t.candidate_id == candidate_id)
    return [transition_from_row(r) for r in conn.execute(query).mappings()]


def get_turn(conn: Connection, turn_ref: str) -> Turn | None:
    row = conn.execute(select(store.turns).where(store.turns.c.id == turn_ref)).mappings().first()
    return turn_from_row(row) if row else None


def find_turn(conn: Connection, conversation_id: str, turn_id: str, trigger: str, *,
              created_by: str | None) -> Turn | None:
    """The turn one token submitted under these ids (turns are idempotent per token)."""
    t = store.turns.c
    row = conn.execute(
        select(store.turns).where(
            and_(t.conversation_id == conversation_id, t.turn_id == turn_id, t.trigger == trigger,
                 t.created_by.is_(None) if created_by is None else t.created_by == created_by)
        )
    ).mappings().first()
    return turn_from_row(row) if row else None


def origins_of_turn(conn: Connection, turn_ref: str) -> list[Origin]:
    o = store.origins.c
    rows = conn.execute(
        select(store.origins).where(o.turn_ref == turn_ref).order_by(o.created_at, o.id)
    ).mappings()
    return [origin_from_row(r) for r in rows]


def candidates_of_turn(conn: Connection, turn_ref: str) -> list[Candidate]:
    o = store.origins.c
    ids = [r[0] for r in conn.execute(select(o.candidate_id).where(o.turn_ref == turn_ref))]
    found = get_candidates(conn, list(dict.fromkeys(ids)))
    return [found[i] for i in dict.fromkeys(ids) if i in found]


def matcher_items(conn: Connection) -> list[tuple[str, str, Kind, str]]:
    """Every candidate the equivalence matcher should know (all but archived ones)."""
    c = store.candidates.c
    rows = conn.execute(
        select(c.id, c.namespace, c.kind, c.content).where(c.status != Status.ARCHIVED.value)
    )
    return [(r.id, r.namespace, Kind(r.kind), r.content) for r in rows]
