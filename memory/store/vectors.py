"""Candidate vectors, per embedding model: what was embedded once is read back, not embedded
again (the equivalence matcher at start, the recall index on approve, reindex and import).

`CandidateVectors` is the `VectorStore` the embeddings package is handed. It writes in
transactions of its own, so it is called outside a write of the service (after the commit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from memvet.memory.clock import utcnow
from memvet.memory.ports import text_hash
from memvet.memory.records import Status
from memvet.memory.store import tables

_CHUNK = 500  # hashes per IN (...) read
_LOAD = select(tables.candidate_vectors.c.content_hash, tables.candidate_vectors.c.vector).where(
    tables.candidate_vectors.c.model_id == bindparam("model"),
    tables.candidate_vectors.c.content_hash.in_(bindparam("hashes", expanding=True)),
)


class CandidateVectors:
    """The `VectorStore` over the `candidate_vectors` table."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def load(self, model_id: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """The stored vectors of these text hashes (missing ones are left out)."""
        found: dict[str, bytes] = {}
        wanted = list(dict.fromkeys(hashes))
        with self._engine.connect() as conn:
            for start in range(0, len(wanted), _CHUNK):
                rows = conn.execute(_LOAD, {"model": model_id,
                                            "hashes": wanted[start:start + _CHUNK]})
                found.update((h, bytes(v)) for h, v in rows)
        return found

    def save(self, model_id: str, vectors: Mapping[str, bytes]) -> None:
        """Store vectors; one already stored (by another process, say) is kept as it is."""
        if not vectors:
            return
        now = utcnow()
        rows = [{"model_id": model_id, "content_hash": h, "vector": v, "created_at": now}
                for h, v in vectors.items()]
        with self._engine.begin() as conn:
            conn.execute(_insert_ignoring_duplicates(conn), rows)


def _insert_ignoring_duplicates(conn: Connection) -> Any:
    table = tables.candidate_vectors
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing()
    return sqlite.insert(table).on_conflict_do_nothing()


def prune(conn: Connection, keep_model: str) -> int:
    """Delete other models' vectors, and this model's vectors of texts no candidate or memory
    holds any more (archived, edited away). Returns how many rows went."""
    v = tables.candidate_vectors.c
    gone = conn.execute(delete(tables.candidate_vectors).where(v.model_id != keep_model))
    removed = int(gone.rowcount or 0)
    c, m = tables.candidates.c, tables.memories.c
    wanted = {text_hash(r[0]) for r in conn.execute(
        select(c.content).where(c.status != Status.ARCHIVED.value))}
    wanted.update(text_hash(r[0]) for r in conn.execute(select(m.content)))
    stored = [r[0] for r in conn.execute(select(v.content_hash).where(v.model_id == keep_model))]
    stale = [h for h in stored if h not in wanted]
    for start in range(0, len(stale), _CHUNK):
        conn.execute(delete(tables.candidate_vectors).where(
            v.model_id == keep_model, v.content_hash.in_(stale[start:start + _CHUNK])))
    return removed + len(stale)


def count(conn: Connection, model_id: str) -> int:
    """How many vectors of this model are stored."""
    v = tables.candidate_vectors.c
    return int(conn.execute(select(func.count()).where(v.model_id == model_id)).scalar_one())
