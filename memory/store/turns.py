"""Stored turns: the exchanges (or compacted stretches) candidates were extracted from."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, insert, select, update
from sqlalchemy.engine import Connection

from memvet.memory.records import (
    Candidate,
    Origin,
    Turn,
    TurnSubmission,
    origin_from_row,
    turn_from_row,
)
from memvet.memory.store import tables
from memvet.memory.store.candidates import get_candidates


def get_turn(conn: Connection, turn_ref: str) -> Turn | None:
    row = conn.execute(select(tables.turns).where(tables.turns.c.id == turn_ref)).mappings().first()
    return turn_from_row(row) if row else None


def find_turn(conn: Connection, conversation_id: str, turn_id: str, trigger: str, *,
              created_by: str | None) -> Turn | None:
    """The turn one token submitted under these ids (turns are idempotent per token)."""
    t = tables.turns.c
    row = conn.execute(
        select(tables.turns).where(
            and_(t.conversation_id == conversation_id, t.turn_id == turn_id, t.trigger == trigger,
                 t.created_by.is_(None) if created_by is None else t.created_by == created_by)
        )
    ).mappings().first()
    return turn_from_row(row) if row else None


def origins_of_turn(conn: Connection, turn_ref: str) -> list[Origin]:
    o = tables.origins.c
    rows = conn.execute(
        select(tables.origins).where(o.turn_ref == turn_ref).order_by(o.created_at, o.id)
    ).mappings()
    return [origin_from_row(r) for r in rows]


def candidates_of_turn(conn: Connection, turn_ref: str) -> list[Candidate]:
    o = tables.origins.c
    ids = [r[0] for r in conn.execute(select(o.candidate_id).where(o.turn_ref == turn_ref))]
    found = get_candidates(conn, list(dict.fromkeys(ids)))
    return [found[i] for i in dict.fromkeys(ids) if i in found]




def insert_turn(conn: Connection, *, turn_ref: str, sub: TurnSubmission, workspace: str | None,
                persona: str, extractor: str | None, status: str, created_by: str,
                now: datetime) -> None:
    conn.execute(insert(tables.turns).values(
        id=turn_ref, conversation_id=sub.conversation_id, turn_id=sub.turn_id,
        trigger=sub.trigger, workspace=workspace, persona=persona,
        messages=[{"role": m.role, "content": m.content} for m in sub.messages],
        extractor=extractor, status=status, created_by=created_by, created_at=now,
    ))


def set_status(conn: Connection, turn_ref: str, status: str) -> None:
    conn.execute(update(tables.turns).where(tables.turns.c.id == turn_ref).values(status=status))
