"""The audit trail: one transition row per change, and a replay that rebuilds state from it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from memvet.memory.records import Action, Status, Transition, transition_from_row
from memvet.memory.store import tables

_INSERT = insert(tables.transitions)


def record(
    conn: Connection,
    *,
    candidate_id: str,
    action: Action,
    from_status: Status | None,
    to_status: Status | None,
    actor: str,
    at: datetime,
    memory_id: str | None = None,
    changes: dict[str, Any] | None = None,
    reason: str | None = None,
) -> None:
    """Write one transition row. `changes` maps field -> {"from": old, "to": new}."""
    conn.execute(
        _INSERT,  # one prepared statement with parameters: no statement built per call
        {
            "candidate_id": candidate_id,
            "memory_id": memory_id,
            "action": action.value,
            "from_status": from_status.value if from_status else None,
            "to_status": to_status.value if to_status else None,
            "actor": actor,
            "at": at,
            "changes": changes or None,
            "reason": reason,
        },
    )


def diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The {"field": {"from", "to"}} form of what changed between two snapshots."""
    return {
        key: {"from": before.get(key), "to": value}
        for key, value in after.items()
        if before.get(key) != value
    }


@dataclass
class Replayed:
    """What the audit trail says a candidate (and its memory) look like now."""

    status: Status | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    memory_id: str | None = None
    memory_fields: dict[str, Any] = field(default_factory=dict)
    observations: int = 0


def replay(transitions: Iterable[Transition]) -> dict[str, Replayed]:
    """Fold transitions (in id order) into per-candidate state."""
    state: dict[str, Replayed] = {}
    for t in sorted(transitions, key=lambda t: t.id):
        r = state.setdefault(t.candidate_id, Replayed())
        if t.to_status is not None:
            r.status = t.to_status
        changes = t.changes or {}
        new_values = {k: v["to"] for k, v in changes.items() if isinstance(v, dict) and "to" in v}
        if t.action is Action.CREATED:
            r.observations = 1
        elif t.action in (Action.MERGED, Action.REINFORCED, Action.REVIVED):
            r.observations += 1
        if t.action in (Action.CREATED, Action.EDITED):
            r.fields.update(new_values)
        elif t.action is Action.APPROVED:
            r.fields.update(new_values)
            r.memory_id = t.memory_id
            r.memory_fields = {**r.fields}
        elif t.action is Action.MEMORY_UPDATED:  # the candidate follows its memory
            r.memory_fields.update(new_values)
            r.fields.update(new_values)
        elif t.action is Action.MEMORY_DELETED:
            r.memory_id = None
            r.memory_fields = {}
    return state


def transitions(conn: Connection, candidate_id: str | None = None) -> list[Transition]:
    t = tables.transitions.c
    query = select(tables.transitions).order_by(t.id)
    if candidate_id is not None:
        query = query.where(t.candidate_id == candidate_id)
    return [transition_from_row(r) for r in conn.execute(query).mappings()]
