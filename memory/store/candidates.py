"""Reading candidates: the queue and its filters, one candidate, origins, counts.

Writes to candidates are intake's (observations.py) and review's (review.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, and_, func, select
from sqlalchemy.engine import Connection

from memvet.memory.kinds import Kind
from memvet.memory.records import (
    Candidate,
    Origin,
    Page,
    Source,
    Status,
    candidate_from_row,
    origin_from_row,
)
from memvet.memory.store import tables

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
    c = tables.candidates.c
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


def page(conn: Connection, query: Select[Any], count: Select[Any], offset: int, limit: int,
          mapper: Any) -> Page[Any]:
    total = int(conn.execute(count).scalar_one())
    rows = conn.execute(query.offset(offset).limit(limit)).mappings().all()
    items = [mapper(r) for r in rows]
    return Page(items=items, total=total, offset=offset, has_next=offset + len(items) < total)


def list_candidates(
    conn: Connection, f: CandidateFilter, *, offset: int, limit: int
) -> Page[Candidate]:
    c = tables.candidates.c
    where = _candidate_where(f)
    column, desc = CANDIDATE_ORDERS.get(f.order, CANDIDATE_ORDERS["newest"])
    col = getattr(c, column)
    query = select(tables.candidates).where(and_(True, *where)).order_by(
        col.desc() if desc else col.asc(), c.id
    )
    count = select(func.count()).select_from(tables.candidates).where(and_(True, *where))
    return page(conn, query, count, offset, limit, candidate_from_row)


def get_candidate(conn: Connection, candidate_id: str) -> Candidate | None:
    row = conn.execute(
        select(tables.candidates).where(tables.candidates.c.id == candidate_id)
    ).mappings().first()
    return candidate_from_row(row) if row else None


def get_candidates(conn: Connection, ids: Sequence[str]) -> dict[str, Candidate]:
    if not ids:
        return {}
    rows = conn.execute(
        select(tables.candidates).where(tables.candidates.c.id.in_(list(ids)))
    ).mappings()
    return {r["id"]: candidate_from_row(r) for r in rows}


def status_counts(conn: Connection, namespaces: Sequence[str] | None) -> dict[str, int]:
    c = tables.candidates.c
    query = select(c.status, func.count()).group_by(c.status)
    if namespaces is not None:
        query = query.where(c.namespace.in_(list(namespaces)))
    return {s: int(n) for s, n in conn.execute(query)}


def pending_by_namespace(conn: Connection, namespaces: Sequence[str] | None) -> dict[str, int]:
    c = tables.candidates.c
    query = (
        select(c.namespace, func.count())
        .where(c.status == Status.PENDING.value)
        .group_by(c.namespace)
    )
    if namespaces is not None:
        query = query.where(c.namespace.in_(list(namespaces)))
    return {ns: int(n) for ns, n in conn.execute(query)}


def origins(conn: Connection, candidate_id: str) -> list[Origin]:
    o = tables.origins.c
    rows = conn.execute(
        select(tables.origins).where(o.candidate_id == candidate_id).order_by(o.created_at, o.id)
    ).mappings()
    return [origin_from_row(r) for r in rows]


def matcher_items(conn: Connection) -> list[tuple[str, str, Kind, str]]:
    """Every candidate the equivalence matcher should know (all but archived ones)."""
    c = tables.candidates.c
    rows = conn.execute(
        select(c.id, c.namespace, c.kind, c.content).where(c.status != Status.ARCHIVED.value)
    )
    return [(r.id, r.namespace, Kind(r.kind), r.content) for r in rows]


def namespaces(conn: Connection) -> set[str]:
    """Every namespace that has a candidate."""
    c = tables.candidates.c
    return {r[0] for r in conn.execute(select(c.namespace).distinct())}


def pending_rows(conn: Connection) -> list[dict[str, Any]]:
    """Every pending candidate's row (the policy checks them when it is switched on)."""
    c = tables.candidates.c
    rows = conn.execute(select(tables.candidates).where(c.status == Status.PENDING.value))
    return [dict(r) for r in rows.mappings()]
