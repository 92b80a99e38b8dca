"""Export and import as JSON Lines: one object per line, `record` naming its type.

Types: `setting`, `turn`, `candidate`, `origin`, `memory`, `transition`. Export writes every
row with every column, in a stable order, so export -> import into an empty store -> export
gives the same bytes. A `memory` line may also be minimal (`content`, `kind`, `namespace`):
that is how people bring memories from elsewhere; it arrives approved. Import checks every
line first and writes nothing if any line is bad.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Table, case, func, insert, select, text
from sqlalchemy.engine import Connection

from memvet.memory.clock import isoformat, parse_iso
from memvet.memory.errors import MemvetError, ValidationError
from memvet.memory.kinds import parse_kind
from memvet.memory.namespaces import Namespace
from memvet.memory.proposals import clean_confidence, clean_content, content_key
from memvet.memory.records import Action, Source, Status
from memvet.memory.store import outbox, tables
from memvet.memory.store.tables import new_id

IMPORT_ACTOR = "import"

# record type -> (table, ordering columns); the order is also the import order.
TABLES: dict[str, tuple[Table, tuple[str, ...]]] = {
    "setting": (tables.settings_table, ("key",)),
    "turn": (tables.turns, ("created_at", "id")),
    "candidate": (tables.candidates, ("created_at", "id")),
    "origin": (tables.origins, ("created_at", "id")),
    "memory": (tables.memories, ("approved_at", "id")),
    "transition": (tables.transitions, ("id",)),
}
DATETIME_COLUMNS = {
    name
    for table, _ in TABLES.values()
    for name, column in table.c.items()
    if isinstance(column.type, tables.UTCDateTime)
}


class ImportFailed(ValidationError):
    """Some lines are bad; `errors` holds (line number, message) pairs. Nothing was written."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        shown = "; ".join(f"line {n}: {m}" for n, m in errors[:20])
        more = f" (and {len(errors) - 20} more)" if len(errors) > 20 else ""
        super().__init__(f"import refused, nothing was written: {shown}{more}")
        self.errors = errors


@dataclass
class ImportReport:
    counts: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    memory_ids: list[str] = field(default_factory=list)


def _dump(record: str, row: dict[str, Any]) -> str:
    out: dict[str, Any] = {"record": record}
    for key, value in row.items():
        out[key] = isoformat(value) if isinstance(value, datetime) else value
    return json.dumps(out, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def export_lines(conn: Connection) -> Iterator[str]:
    """Every row of every table, as JSON lines, in a stable order."""
    for record, (table, order) in TABLES.items():
        query = select(table).order_by(*(table.c[c] for c in order))
        for row in conn.execute(query).mappings():
            yield _dump(record, dict(row))


def _coerce(table: Table, data: dict[str, Any]) -> dict[str, Any]:
    """Check a full record's columns and turn ISO strings back into datetimes."""
    row: dict[str, Any] = {}
    unknown = set(data) - set(table.c.keys()) - {"record"}
    if unknown:
        raise ValidationError(f"unknown field(s): {', '.join(sorted(unknown))}")
    for name, column in table.c.items():
        if name not in data:
            # `independent_observations` arrived with schema 0002: older exports lack it and
            # get it counted from their origins after the import.
            if (column.nullable or column.autoincrement is True
                    or name in ("status", "independent_observations")):
                continue
            raise ValidationError(f"missing field {name!r}")
        value = data[name]
        if name in DATETIME_COLUMNS and value is not None:
            if not isinstance(value, str):
                raise ValidationError(f"{name} must be an ISO 8601 time")
            try:
                value = parse_iso(value)
            except ValueError as exc:
                raise ValidationError(f"{name} is not an ISO 8601 time") from exc
        row[name] = value
    return row


def _check_row(record: str, row: dict[str, Any]) -> None:
    if "kind" in row:
        row["kind"] = parse_kind(row["kind"]).value
    if "namespace" in row and record in ("candidate", "memory"):
        row["namespace"] = str(Namespace.parse(row["namespace"]))
    if "content" in row and record in ("candidate", "memory"):
        row["content"] = clean_content(row["content"])
    if record == "candidate":
        Status(row["status"])
        Source(row["source"])
        clean_confidence(row["confidence"])
        if int(row["observations"]) < 1:
            raise ValidationError("observations must be at least 1")
        if "independent_observations" in row and not (
                1 <= int(row["independent_observations"]) <= int(row["observations"])):
            raise ValidationError(
                "independent_observations must be between 1 and observations")
    if record == "transition":
        Action(row["action"])


@dataclass
class _Parsed:
    full: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    minimal: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _parse(lines: Iterable[str]) -> tuple[_Parsed, list[tuple[int, str]]]:
    parsed, errors = _Parsed(), []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValidationError("each line must be a JSON object")
            record = data.get("record")
            if record not in TABLES:
                raise ValidationError(
                    f"unknown record type {str(record)[:30]!r}; use one of {', '.join(TABLES)}")
            if record == "memory" and "id" not in data:
                item = {
                    "content": clean_content(data.get("content")),
                    "kind": parse_kind(data.get("kind")).value,
                    "namespace": str(Namespace.parse(data.get("namespace"))),
                    "observations": int(data.get("observations", 1)),
                    "approved_by": str(data.get("approved_by") or IMPORT_ACTOR)[:128],
                }
                if int(item["observations"]) < 1:
                    raise ValidationError("observations must be at least 1")
                parsed.minimal.append((number, item))
                continue
            table, _ = TABLES[record]
            row = _coerce(table, data)
            _check_row(record, row)
            parsed.full.setdefault(record, []).append((number, row))
        except json.JSONDecodeError as exc:
            errors.append((number, f"not valid JSON ({exc.msg})"))
        except MemvetError as exc:
            errors.append((number, exc.message))
        except (TypeError, ValueError, KeyError) as exc:
            errors.append((number, f"bad value: {exc}"))
    return parsed, errors


def _existing_ids(conn: Connection, table: Table, key: str, ids: list[Any]) -> set[Any]:
    found: set[Any] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        query = select(table.c[key]).where(table.c[key].in_(chunk))
        found.update(r[0] for r in conn.execute(query))
    return found


def import_lines(conn: Connection, lines: Iterable[str], *, now: datetime) -> ImportReport:
    """Validate everything, then write everything in the caller's transaction."""
    parsed, errors = _parse(lines)
    known: dict[str, set[Any]] = {}
    for record, items in parsed.full.items():
        table, _ = TABLES[record]
        key = "key" if record == "setting" else "id"
        ids = [row[key] for _, row in items if key in row]
        seen: set[Any] = set()
        for number, row in items:
            if key in row and row[key] in seen:
                errors.append((number, f"{record} {row[key]!r} appears twice"))
            seen.add(row.get(key))
        clash = _existing_ids(conn, table, key, ids) if ids else set()
        for number, row in items:
            if row.get(key) in clash and record not in ("setting", "transition"):
                errors.append((number, f"{record} {row[key]!r} already exists"))
        known[record] = seen
    candidate_ids = known.get("candidate", set())
    turn_ids = known.get("turn", set())
    for number, row in parsed.full.get("origin", []):
        if row["candidate_id"] not in candidate_ids and not _existing_ids(
                conn, tables.candidates, "id", [row["candidate_id"]]):
            errors.append((number, f"origin refers to unknown candidate {row['candidate_id']!r}"))
        if row.get("turn_ref") and row["turn_ref"] not in turn_ids and not _existing_ids(
                conn, tables.turns, "id", [row["turn_ref"]]):
            errors.append((number, f"origin refers to unknown turn {row['turn_ref']!r}"))
    for number, row in parsed.full.get("memory", []):
        if row["candidate_id"] not in candidate_ids and not _existing_ids(
                conn, tables.candidates, "id", [row["candidate_id"]]):
            errors.append((number, f"memory refers to unknown candidate {row['candidate_id']!r}"))
    if errors:
        raise ImportFailed(sorted(errors))

    report = ImportReport()
    renumber = bool(conn.execute(select(func.count()).select_from(tables.transitions)).scalar())
    uncounted = [row["id"] for _, row in parsed.full.get("candidate", [])
                 if "independent_observations" not in row]
    for _, row in parsed.full.get("candidate", []):
        row.setdefault("independent_observations", 1)
    for record, (table, _) in TABLES.items():
        rows = [row for _, row in parsed.full.get(record, [])]
        if record == "setting":
            for row in rows:
                conn.execute(table.delete().where(table.c.key == row["key"]))
        if record == "transition" and renumber:
            rows = [{k: v for k, v in row.items() if k != "id"} for row in rows]
        if rows:
            conn.execute(insert(table), rows)
        if record == "memory":
            report.memory_ids.extend(row["id"] for row in rows)
            for row in rows:
                outbox.add(conn, row["id"], row["namespace"], "upsert", now)
        report.counts[record] = len(rows)
    if uncounted:
        _count_independent(conn, uncounted)
    for memory_id in _import_minimal(conn, [item for _, item in parsed.minimal], now):
        if memory_id is None:
            report.skipped += 1
        else:
            report.memory_ids.append(memory_id)
            report.counts["memory"] = report.counts.get("memory", 0) + 1
    if conn.dialect.name == "postgresql":
        for name in ("transitions", "index_outbox"):
            conn.execute(text(
                f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                f"COALESCE((SELECT MAX(id) FROM {name}), 0) + 1, false)"))
    return report


_PREFERENCE = {Status.PENDING.value: 0, Status.APPROVED.value: 1, Status.REJECTED.value: 2,
               Status.ARCHIVED.value: 3}


def _import_minimal(conn: Connection, items: list[dict[str, Any]],
                    now: datetime) -> list[str | None]:
    """Bare memories from elsewhere: each an approved candidate (with its origin and the
    created/approved transitions) plus its memory and an index outbox row, written with one
    statement per table. A memory is skipped (None) where its text's preferred equivalent
    (pending first, as intake prefers) is already approved, earlier lines included."""
    keys = [content_key(item["content"]) for item in items]
    best = _preferred_status(conn, set(keys))
    candidates_, origins_, transitions_, memories_, owed = [], [], [], [], []
    out: list[str | None] = []
    approved = _PREFERENCE[Status.APPROVED.value]
    for item, key in zip(items, keys, strict=True):
        slot = (item["namespace"], item["kind"], key)
        if best.get(slot) == approved:
            out.append(None)
            continue
        best[slot] = min(best.get(slot, approved), approved)
        candidate_id, memory_id, actor = new_id(), new_id(), item["approved_by"]
        content, kind, namespace = item["content"], item["kind"], item["namespace"]
        candidates_.append({
            "id": candidate_id, "content": content, "kind": kind, "namespace": namespace,
            "source": Source.MANUAL.value, "confidence": 1.0,
            "observations": item["observations"], "independent_observations": 1,
            "status": Status.APPROVED.value, "content_key": key, "original_key": key,
            "created_by": IMPORT_ACTOR, "created_at": now, "last_observed_at": now,
            "touched_at": now, "reviewed_at": now, "reviewed_by": actor, "review_reason": None})
        origins_.append({
            "id": new_id(), "candidate_id": candidate_id, "turn_ref": None,
            "source": Source.MANUAL.value, "conversation_id": None, "turn_id": None,
            "excerpt": None, "content": content, "kind": kind, "namespace": namespace,
            "confidence": 1.0, "created_by": IMPORT_ACTOR, "created_at": now})
        values = {"content": content, "kind": kind, "namespace": namespace}
        transitions_.append({
            "candidate_id": candidate_id, "memory_id": None, "action": Action.CREATED.value,
            "from_status": None, "to_status": Status.PENDING.value, "actor": IMPORT_ACTOR,
            "at": now, "reason": None, "changes": {
                **{k: {"from": None, "to": v} for k, v in values.items()},
                "source": {"from": None, "to": Source.MANUAL.value},
                "confidence": {"from": None, "to": 1.0}}})
        transitions_.append({
            "candidate_id": candidate_id, "memory_id": memory_id,
            "action": Action.APPROVED.value, "from_status": Status.PENDING.value,
            "to_status": Status.APPROVED.value, "actor": actor, "at": now, "reason": None,
            "changes": {k: {"from": v, "to": v} for k, v in values.items()}})
        memories_.append({
            "id": memory_id, "candidate_id": candidate_id, "content": content, "kind": kind,
            "namespace": namespace, "observations": item["observations"], "approved_at": now,
            "approved_by": actor, "updated_at": now})
        owed.append({"memory_id": memory_id, "namespace": namespace, "op": "upsert",
                     "created_at": now})
        out.append(memory_id)
    for table, rows in ((tables.candidates, candidates_), (tables.origins, origins_),
                        (tables.transitions, transitions_), (tables.memories, memories_),
                        (tables.index_outbox, owed)):
        if rows:
            conn.execute(insert(table), rows)
    return out


def _preferred_status(conn: Connection, keys: set[str]) -> dict[tuple[str, str, str], int]:
    """{(namespace, kind, text key): the preference of the status intake would pick} for
    candidates whose current or original text has one of these keys."""
    c = tables.candidates.c
    found: dict[tuple[str, str, str], int] = {}
    wanted = sorted(keys)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        for column in (c.content_key, c.original_key):
            rows = conn.execute(select(c.namespace, c.kind, column, c.status)
                                .where(column.in_(chunk)))
            for ns, kind, key, status in rows:
                slot = (ns, kind, key)
                found[slot] = min(found.get(slot, 9), _PREFERENCE[status])
    return found


def _count_independent(conn: Connection, candidate_ids: list[str]) -> None:
    """Independent observations of candidates from an export that predates the count."""
    o = tables.origins.c
    for start in range(0, len(candidate_ids), 500):
        chunk = candidate_ids[start:start + 500]
        counts = conn.execute(
            select(o.candidate_id,
                   func.count(func.distinct(o.conversation_id))
                   + func.count(func.distinct(case((o.conversation_id.is_(None),
                                                    func.coalesce(o.created_by, "")))))
                   ).where(o.candidate_id.in_(chunk)).group_by(o.candidate_id))
        for candidate_id, n in counts:
            conn.execute(tables.candidates.update()
                         .where(tables.candidates.c.id == candidate_id)
                         .values(independent_observations=max(1, int(n))))
