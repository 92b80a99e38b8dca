"""Intake's writes: find a candidate's equivalent by its text, insert a new candidate, or count
one more observation on an equivalent (with its origin and audit row).

What an observation does depends on the equivalent's status: pending merges, approved
reinforces the memory, rejected is counted and stays rejected ("don't ask me again"), archived
comes back to pending.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, case, distinct, func, insert, select, union_all, update
from sqlalchemy.engine import Connection

from memvet.memory.kinds import Kind
from memvet.memory.proposals import Proposal, content_key
from memvet.memory.records import (
    Action,
    Candidate,
    OriginInput,
    Outcome,
    Status,
    candidate_from_row,
)
from memvet.memory.store import audit, tables
from memvet.memory.store.tables import new_id

_STATUS_PREFERENCE = {
    Status.PENDING.value: 0,
    Status.APPROVED.value: 1,
    Status.REJECTED.value: 2,
    Status.ARCHIVED.value: 3,
}
# Built once and executed with parameters: intake is the hot path, and building a statement
# with literal values per call costs more than running it.
_INSERT_CANDIDATE = insert(tables.candidates)
_INSERT_ORIGIN = insert(tables.origins)


def _by_key(column: Any) -> Any:
    c = tables.candidates.c
    return select(tables.candidates).where(
        c.namespace == bindparam("ns"), c.kind == bindparam("kind"), column == bindparam("key")
    )


# Two index searches, not `content_key = k OR original_key = k`: with the OR, SQLite searched
# only the (namespace, kind) prefix and scanned every candidate of that namespace and kind.
_FIND_EXACT = union_all(
    _by_key(tables.candidates.c.content_key), _by_key(tables.candidates.c.original_key)
)


def find_exact(conn: Connection, namespace: str, kind: Kind, key: str) -> dict[str, Any] | None:
    """The equivalent candidate by normalised text, preferring pending ones."""
    rows = conn.execute(
        _FIND_EXACT, {"ns": namespace, "kind": kind.value, "key": key}
    ).mappings().all()
    if not rows:
        return None
    return dict(min(rows, key=lambda r: (_STATUS_PREFERENCE[r["status"]], r["created_at"])))


def load_for_update(conn: Connection, candidate_id: str) -> dict[str, Any] | None:
    query = select(tables.candidates).where(tables.candidates.c.id == candidate_id)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).mappings().first()
    return dict(row) if row else None


def seen_turn(conn: Connection, candidate_id: str, origin: OriginInput | None) -> bool:
    """Has this exact conversation turn already been counted on this candidate?"""
    if origin is None or origin.conversation_id is None or origin.turn_id is None:
        return False
    found = conn.execute(
        _SEEN_TURN,
        {"cid": candidate_id, "conv": origin.conversation_id, "turn": origin.turn_id},
    ).first()
    return found is not None


_SEEN_TURN = select(tables.origins.c.id).where(
    tables.origins.c.candidate_id == bindparam("cid"),
    tables.origins.c.conversation_id == bindparam("conv"),
    tables.origins.c.turn_id == bindparam("turn"),
).limit(1)


def is_independent(conn: Connection, candidate_id: str, p: Proposal) -> bool:
    """Would this observation be a new independent one: a conversation not yet counted on the
    candidate, or (outside any conversation) a token that has not proposed it before?"""
    o = tables.origins.c
    conversation = p.origin.conversation_id if p.origin else None
    if conversation is not None:
        same = o.conversation_id == conversation
    else:
        same = and_(o.conversation_id.is_(None),
                    o.created_by.is_(None) if p.created_by is None
                    else o.created_by == p.created_by)
    query = select(o.id).where(o.candidate_id == candidate_id, same).limit(1)
    return conn.execute(query).first() is None


def own_counts(conn: Connection, candidate_id: str, created_by: str | None) -> tuple[int, int]:
    """(observations, independent observations) that one token contributed to a candidate."""
    o = tables.origins.c
    mine = o.created_by.is_(None) if created_by is None else o.created_by == created_by
    row = conn.execute(
        select(func.count(), func.count(distinct(o.conversation_id)),
               func.max(case((o.conversation_id.is_(None), 1), else_=0)))
        .where(o.candidate_id == candidate_id, mine)
    ).one()
    return int(row[0]), int(row[1]) + int(row[2] or 0)


def add_origin(conn: Connection, candidate_id: str, p: Proposal, now: datetime) -> None:
    origin = p.origin or OriginInput()
    conn.execute(
        _INSERT_ORIGIN,
        {
            "id": new_id(),
            "candidate_id": candidate_id,
            "turn_ref": origin.turn_ref,
            "source": p.source.value,
            "conversation_id": origin.conversation_id,
            "turn_id": origin.turn_id,
            "excerpt": origin.excerpt,
            "content": p.content,
            "kind": p.kind.value,
            "namespace": p.namespace,
            "confidence": p.confidence,
            "created_by": p.created_by,
            "created_at": now,
        },
    )


def insert_candidate(conn: Connection, p: Proposal, actor: str, now: datetime) -> Candidate:
    key = content_key(p.content)
    candidate_id = new_id()
    row: dict[str, Any] = {
        "id": candidate_id,
        "content": p.content,
        "kind": p.kind.value,
        "namespace": p.namespace,
        "source": p.source.value,
        "confidence": p.confidence,
        "observations": 1,
        "independent_observations": 1,
        "status": Status.PENDING.value,
        "content_key": key,
        "original_key": key,
        "created_by": p.created_by,
        "created_at": now,
        "last_observed_at": now,
        "touched_at": now,
        "reviewed_at": None,
        "reviewed_by": None,
        "review_reason": None,
    }
    conn.execute(_INSERT_CANDIDATE, row)
    add_origin(conn, candidate_id, p, now)
    audit.record(
        conn,
        candidate_id=candidate_id,
        action=Action.CREATED,
        from_status=None,
        to_status=Status.PENDING,
        actor=actor,
        at=now,
        changes=audit.diff(
            {},
            {"content": p.content, "kind": p.kind.value, "namespace": p.namespace,
             "source": p.source.value, "confidence": p.confidence},
        ),
    )
    return candidate_from_row(row)


def observe(
    conn: Connection, existing: dict[str, Any], p: Proposal, actor: str, now: datetime
) -> tuple[Candidate, Outcome, str | None]:
    """Count one more observation on an equivalent candidate. Returns the memory id touched."""
    status = Status(existing["status"])
    independent = existing["independent_observations"] + (
        1 if is_independent(conn, existing["id"], p) else 0)
    values: dict[str, Any] = {
        "observations": existing["observations"] + 1,
        "independent_observations": independent,
        "confidence": max(float(existing["confidence"]), p.confidence),
        "last_observed_at": now,
        "touched_at": now,
    }
    action, outcome, to_status = Action.MERGED, Outcome.MERGED, status
    memory_id: str | None = None
    if status is Status.APPROVED:
        action, outcome = Action.REINFORCED, Outcome.REINFORCED
        m = tables.memories.c
        memory_id = conn.execute(
            select(m.id).where(m.candidate_id == existing["id"])
        ).scalar_one_or_none()
        conn.execute(
            update(tables.memories)
            .where(m.candidate_id == existing["id"])
            .values(observations=m.observations + 1)
        )
    elif status is Status.REJECTED:
        action, outcome = Action.REINFORCED, Outcome.REINFORCED
    elif status is Status.ARCHIVED:
        action, outcome, to_status = Action.REVIVED, Outcome.REVIVED, Status.PENDING
        values["status"] = Status.PENDING.value
    conn.execute(
        update(tables.candidates).where(tables.candidates.c.id == existing["id"]).values(**values)
    )
    add_origin(conn, existing["id"], p, now)
    audit.record(
        conn,
        candidate_id=existing["id"],
        memory_id=memory_id,
        action=action,
        from_status=status,
        to_status=to_status,
        actor=actor,
        at=now,
        changes=audit.diff(
            {"observations": existing["observations"], "confidence": existing["confidence"],
             "independent_observations": existing["independent_observations"]},
            {"observations": values["observations"], "confidence": values["confidence"],
             "independent_observations": independent},
        ),
    )
    return candidate_from_row({**existing, **values}), outcome, memory_id
