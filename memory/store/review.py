"""Review's writes: approve (with edits), reject, edit, update and delete memories, and the
archive sweep. Each checks the candidate's status allows it, runs inside the caller's
transaction and writes its transition row and the index outbox there too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, insert, select, update
from sqlalchemy.engine import Connection

from memvet.memory.errors import InvalidTransition, NotFound
from memvet.memory.kinds import parse_kind
from memvet.memory.namespaces import Namespace
from memvet.memory.proposals import clean_content, content_key
from memvet.memory.records import (
    Action,
    Candidate,
    CandidateEdit,
    Memory,
    Status,
    candidate_from_row,
    memory_from_row,
)
from memvet.memory.store import audit, outbox, tables
from memvet.memory.store.observations import load_for_update
from memvet.memory.store.tables import new_id

NamespaceCheck = Callable[[str], None]


def resolve_edit(
    current: dict[str, Any], edit: CandidateEdit | None, check_namespace: NamespaceCheck
) -> dict[str, Any]:
    """Validate an edit against the current row; returns the new content/kind/namespace."""
    values = {"content": current["content"], "kind": current["kind"],
              "namespace": current["namespace"]}
    if edit is None:
        return values
    if edit.content is not None:
        values["content"] = clean_content(edit.content)
    if edit.kind is not None:
        values["kind"] = parse_kind(edit.kind).value
    if edit.namespace is not None:
        values["namespace"] = str(Namespace.parse(edit.namespace))
        check_namespace(values["namespace"])
    return values


def _require_status(row: dict[str, Any], allowed: Status, verb: str) -> None:
    if row["status"] != allowed.value:
        raise InvalidTransition(
            f"cannot {verb} a candidate that is {row['status']}; only {allowed.value} ones"
        )


def get_candidate_row(conn: Connection, candidate_id: str) -> dict[str, Any]:
    row = load_for_update(conn, candidate_id)
    if row is None:
        raise NotFound(f"no candidate with id {candidate_id!r}")
    return row


def get_memory_row(conn: Connection, memory_id: str) -> dict[str, Any]:
    query = select(tables.memories).where(tables.memories.c.id == memory_id)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).mappings().first()
    if row is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    return dict(row)


def approve(
    conn: Connection,
    row: dict[str, Any],
    edit: CandidateEdit | None,
    *,
    actor: str,
    now: datetime,
    check_namespace: NamespaceCheck,
) -> Memory:
    """pending -> approved; writes the memory and owes the index an upsert."""
    _require_status(row, Status.PENDING, "approve")
    values = resolve_edit(row, edit, check_namespace)
    before = {k: row[k] for k in ("content", "kind", "namespace")}
    cand_values = {
        **values,
        "content_key": content_key(values["content"]),
        "status": Status.APPROVED.value,
        "reviewed_at": now,
        "reviewed_by": actor,
        "touched_at": now,
    }
    conn.execute(
        update(tables.candidates).where(tables.candidates.c.id == row["id"]).values(**cand_values)
    )
    memory = {
        "id": new_id(),
        "candidate_id": row["id"],
        "content": values["content"],
        "kind": values["kind"],
        "namespace": values["namespace"],
        "observations": row["observations"],
        "approved_at": now,
        "approved_by": actor,
        "updated_at": now,
    }
    conn.execute(insert(tables.memories).values(**memory))
    changes = audit.diff(before, values)
    # The approved values are always recorded, so the trail alone tells what was approved.
    changes.update({k: {"from": before[k], "to": values[k]} for k in values if k not in changes})
    audit.record(
        conn,
        candidate_id=row["id"],
        memory_id=memory["id"],
        action=Action.APPROVED,
        from_status=Status.PENDING,
        to_status=Status.APPROVED,
        actor=actor,
        at=now,
        changes=changes,
    )
    outbox.add(conn, memory["id"], memory["namespace"], "upsert", now)
    return memory_from_row(memory)


def reject(
    conn: Connection, row: dict[str, Any], reason: str | None, *, actor: str, now: datetime
) -> Candidate:
    """pending -> rejected. A rejected candidate is never asked about again."""
    _require_status(row, Status.PENDING, "reject")
    values = {
        "status": Status.REJECTED.value,
        "reviewed_at": now,
        "reviewed_by": actor,
        "review_reason": reason,
        "touched_at": now,
    }
    conn.execute(
        update(tables.candidates).where(tables.candidates.c.id == row["id"]).values(**values)
    )
    audit.record(
        conn,
        candidate_id=row["id"],
        action=Action.REJECTED,
        from_status=Status.PENDING,
        to_status=Status.REJECTED,
        actor=actor,
        at=now,
        reason=reason,
    )
    return candidate_from_row({**row, **values})


def edit_candidate(
    conn: Connection,
    row: dict[str, Any],
    edit: CandidateEdit,
    *,
    actor: str,
    now: datetime,
    check_namespace: NamespaceCheck,
) -> Candidate:
    """Correct a pending candidate in the queue; the edit counts as a touch for archiving."""
    _require_status(row, Status.PENDING, "edit")
    values = resolve_edit(row, edit, check_namespace)
    changes = audit.diff({k: row[k] for k in values}, values)
    if not changes:  # nothing changed: no audit row, and the archive clock keeps running
        return candidate_from_row(row)
    new = {**values, "content_key": content_key(values["content"]), "touched_at": now}
    conn.execute(update(tables.candidates).where(tables.candidates.c.id == row["id"]).values(**new))
    if changes:
        audit.record(
            conn,
            candidate_id=row["id"],
            action=Action.EDITED,
            from_status=Status.PENDING,
            to_status=Status.PENDING,
            actor=actor,
            at=now,
            changes=changes,
        )
    return candidate_from_row({**row, **new})


def update_memory(
    conn: Connection,
    mem: dict[str, Any],
    edit: CandidateEdit,
    *,
    actor: str,
    now: datetime,
    check_namespace: NamespaceCheck,
) -> Memory:
    """Edit an approved memory; the index re-embeds it (and moves it if the namespace moved).

    Its candidate follows, so a later proposal of the new wording reinforces this memory."""
    values = resolve_edit(mem, edit, check_namespace)
    changes = audit.diff({k: mem[k] for k in values}, values)
    if not changes:
        return memory_from_row(mem)
    new = {**values, "updated_at": now}
    conn.execute(update(tables.memories).where(tables.memories.c.id == mem["id"]).values(**new))
    conn.execute(
        update(tables.candidates)
        .where(tables.candidates.c.id == mem["candidate_id"])
        .values(**values, content_key=content_key(values["content"]))
    )
    if changes:
        audit.record(
            conn,
            candidate_id=mem["candidate_id"],
            memory_id=mem["id"],
            action=Action.MEMORY_UPDATED,
            from_status=Status.APPROVED,
            to_status=Status.APPROVED,
            actor=actor,
            at=now,
            changes=changes,
        )
        if values["namespace"] != mem["namespace"]:
            outbox.add(conn, mem["id"], mem["namespace"], "delete", now)
        outbox.add(conn, mem["id"], values["namespace"], "upsert", now)
    return memory_from_row({**mem, **new})


def delete_memory(
    conn: Connection, mem: dict[str, Any], reason: str | None, *, actor: str, now: datetime
) -> Memory:
    """Remove a memory from recall; its candidate becomes rejected (don't propose it again)."""
    conn.execute(delete(tables.memories).where(tables.memories.c.id == mem["id"]))
    conn.execute(
        update(tables.candidates)
        .where(tables.candidates.c.id == mem["candidate_id"])
        .values(
            status=Status.REJECTED.value,
            reviewed_at=now,
            reviewed_by=actor,
            review_reason=reason or "memory deleted",
            touched_at=now,
        )
    )
    audit.record(
        conn,
        candidate_id=mem["candidate_id"],
        memory_id=mem["id"],
        action=Action.MEMORY_DELETED,
        from_status=Status.APPROVED,
        to_status=Status.REJECTED,
        actor=actor,
        at=now,
        reason=reason or "memory deleted",
    )
    outbox.add(conn, mem["id"], mem["namespace"], "delete", now)
    return memory_from_row(mem)


def archive_stale(
    conn: Connection,
    *,
    older_than: timedelta,
    actor: str,
    now: datetime,
    only: frozenset[str] | None = None,
) -> list[Candidate]:
    """pending candidates untouched (no observation, no edit) for `older_than` -> archived."""
    c = tables.candidates.c
    cutoff = now - older_than
    where = [c.status == Status.PENDING.value, c.touched_at < cutoff]
    if only is not None:
        where.append(c.namespace.in_(sorted(only)))
    rows = conn.execute(select(tables.candidates).where(and_(*where))).mappings().all()
    archived: list[Candidate] = []
    for row in rows:
        conn.execute(
            update(tables.candidates)
            .where(and_(c.id == row["id"], c.status == Status.PENDING.value))
            .values(status=Status.ARCHIVED.value)
        )
        audit.record(
            conn,
            candidate_id=row["id"],
            action=Action.ARCHIVED,
            from_status=Status.PENDING,
            to_status=Status.ARCHIVED,
            actor=actor,
            at=now,
            reason=f"untouched for {older_than.days} days",
        )
        archived.append(candidate_from_row({**dict(row), "status": Status.ARCHIVED.value}))
    return archived
