"""Keeping the recall index in step with the database, which is the source of truth.

Every change to a memory writes an outbox row in its own transaction; `drain` applies the
rows to the index and deletes them. `reconcile` compares the whole index with the database
(at start-up and on `memvet reindex`), so a crash between commit and index write loses
nothing and leaves nothing unapproved in the index.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from memvet.memory.ports import IndexedMemory, MemoryIndex, index_hash
from memvet.memory.store import memories, outbox

log = logging.getLogger(__name__)
BATCH = 256


@dataclass(frozen=True)
class ReconcileReport:
    checked: int
    upserted: int
    removed: int


IndexNotify = Callable[[dict[str, list[str]]], None]


class IndexSync:
    """`notify` hears {namespace: memory ids} after each change reaches the index, so other
    workers sharing the index can refresh what they hold in memory."""

    def __init__(self, engine: Engine, index: MemoryIndex,
                 notify: IndexNotify | None = None) -> None:
        self._engine = engine
        self._index = index
        self._notify = notify
        self._lock = threading.Lock()

    def _announce(self, changed: dict[str, set[str]]) -> None:
        if self._notify is None or not changed:
            return
        try:
            self._notify({ns: sorted(ids) for ns, ids in changed.items()})
        except Exception:  # other workers catch up on their next start; never fail a write
            log.exception("announcing index changes failed")

    def drain(self) -> int:
        """Apply what the outbox says the index owes. Failures stay queued for later."""
        with self._lock:
            with self._engine.connect() as conn:
                rows = outbox.owed(conn, limit=5000)
                if not rows:
                    return 0
                mems = memories.get_memories(conn, list({r.memory_id for r in rows}))
            removals: dict[str, set[str]] = {}
            upserts: dict[str, IndexedMemory] = {}
            for r in rows:
                mem = mems.get(r.memory_id)
                if r.op == "delete" or mem is None or mem.namespace != r.namespace:
                    removals.setdefault(r.namespace, set()).add(r.memory_id)
            for mem in mems.values():
                upserts[mem.id] = IndexedMemory(mem.id, mem.namespace, mem.kind, mem.content)
            try:
                for ns, gone in removals.items():
                    self._index.remove(ns, sorted(gone))
                if upserts:
                    self._index.upsert(list(upserts.values()))
            except Exception:
                log.exception("recall index update failed; it stays queued for reconciliation")
                return 0
            with self._engine.begin() as conn:
                outbox.clear_through(conn, rows[-1].id)
            changed = {ns: set(ids) for ns, ids in removals.items()}
            for item in upserts.values():
                changed.setdefault(item.namespace, set()).add(item.id)
            self._announce(changed)
            return len(rows)

    def reconcile(self, progress: Callable[[int, int], None] | None = None) -> ReconcileReport:
        """Make the index hold exactly the approved memories, with current content."""
        with self._lock:
            with self._engine.connect() as conn:
                last = outbox.last_id(conn)
                rows = memories.indexable(conn)
            indexed = self._index.snapshot()
            wanted: dict[str, dict[str, IndexedMemory]] = {}
            for mid, ns, kind, content in rows:
                wanted.setdefault(ns, {})[mid] = IndexedMemory(mid, ns, kind, content)
            stale: list[IndexedMemory] = []
            changed: dict[str, set[str]] = {}
            removed = 0
            for ns, items in wanted.items():
                have = indexed.get(ns, {})
                stale.extend(m for mid, m in items.items()
                             if have.get(mid) != index_hash(m.kind, m.content))
            for ns, have in indexed.items():
                extra = sorted(set(have) - set(wanted.get(ns, {})))
                if extra:
                    self._index.remove(ns, extra)
                    removed += len(extra)
                    changed.setdefault(ns, set()).update(extra)
            total = len(stale)
            if progress:
                progress(0, total)
            for start in range(0, total, BATCH):
                self._index.upsert(stale[start:start + BATCH])
                for item in stale[start:start + BATCH]:
                    changed.setdefault(item.namespace, set()).add(item.id)
                if progress:
                    progress(min(start + BATCH, total), total)
            if last is not None:
                with self._engine.begin() as conn:
                    outbox.clear_through(conn, last)
            self._announce(changed)
            return ReconcileReport(checked=len(rows), upserted=total, removed=removed)
