"""Keeping the recall index in step with the database, which is the source of truth.

Every change to a memory writes an outbox row in its own transaction; `drain` applies the
rows to the index and deletes them. `reconcile` compares the whole index with the database
(at start-up and on `memvet reindex`), so a crash between commit and index write loses
nothing and leaves nothing unapproved in the index. Both hand the index large batches (the
index embeds a batch's new texts together), and both can report progress.

`reconcile` can also fill another index than the one serving (`memvet reindex` to another
embedding model builds the new model's collections beside the old ones): it then leaves the
outbox alone, since what it owes is the serving index's. Reconciling is resumable by nature:
what the target already holds with the right content is not written again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from memvet.memory.ports import EmbedsAhead, IndexedMemory, MemoryIndex, index_hash
from memvet.memory.store import memories, outbox

log = logging.getLogger(__name__)
BATCH = 512  # memories per index upsert: one embedding batch, one Chroma write per namespace
DRAIN_ROWS = 20_000  # outbox rows read at a time
AHEAD = 2  # batches embedded at once ahead of the writes (at most one per core)


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

    def drain(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Apply what the outbox says the index owes. Failures stay queued for later.

        `progress` hears (memories done, memories owed) as batches reach the index."""
        done = 0
        with self._lock:
            while True:
                with self._engine.connect() as conn:
                    rows = outbox.owed(conn, limit=DRAIN_ROWS)
                    if not rows:
                        return done
                    owed_total = done + outbox.count(conn) if progress else 0
                    mems = memories.get_memories(conn, list({r.memory_id for r in rows}))
                removals: dict[str, set[str]] = {}
                for r in rows:
                    mem = mems.get(r.memory_id)
                    if r.op == "delete" or mem is None or mem.namespace != r.namespace:
                        removals.setdefault(r.namespace, set()).add(r.memory_id)
                upserts = [IndexedMemory(m.id, m.namespace, m.kind, m.content)
                           for m in mems.values()]
                try:
                    for ns, gone in removals.items():
                        self._index.remove(ns, sorted(gone))
                    upsert_batches(self._index, upserts, _counter(progress, done, owed_total))
                except Exception:
                    log.exception("recall index update failed; it stays queued for "
                                  "reconciliation")
                    return done
                with self._engine.begin() as conn:
                    outbox.clear_through(conn, rows[-1].id)
                changed = {ns: set(ids) for ns, ids in removals.items()}
                for item in upserts:
                    changed.setdefault(item.namespace, set()).add(item.id)
                self._announce(changed)
                done += len(rows)
                if progress:
                    progress(done, owed_total)
                if len(rows) < DRAIN_ROWS:
                    return done

    def reconcile(self, progress: Callable[[int, int], None] | None = None, *,
                  into: MemoryIndex | None = None) -> ReconcileReport:
        """Make the index (or `into`, another one being built) hold exactly the approved
        memories, with current content."""
        index = into or self._index
        with self._lock:
            with self._engine.connect() as conn:
                last = outbox.last_id(conn) if into is None else None
                rows = memories.indexable(conn)
            indexed = index.snapshot()
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
                    index.remove(ns, extra)
                    removed += len(extra)
                    changed.setdefault(ns, set()).update(extra)
            total = len(stale)
            if progress:
                progress(0, total)
            upsert_batches(index, stale, _counter(progress, 0, total))
            for item in stale:
                changed.setdefault(item.namespace, set()).add(item.id)
            if last is not None:
                with self._engine.begin() as conn:
                    outbox.clear_through(conn, last)
            if into is None:
                self._announce(changed)
            return ReconcileReport(checked=len(rows), upserted=total, removed=removed)


def upsert_batches(index: MemoryIndex, items: Sequence[IndexedMemory],
                   step: Callable[[int], None]) -> None:
    """Upsert `items` BATCH at a time, `step` hearing each batch's size. An index that embeds
    ahead (ports.EmbedsAhead) embeds the next batches in worker threads (one per core, at most
    AHEAD) while this one is written, so the model and the writes (database, Chroma) run side
    by side. Items go shortest text first: each batch then holds texts of about one length,
    which the embedder pads least (6% faster than batches in arrival order, measured)."""
    items = sorted(items, key=lambda m: len(m.content))
    batches = [items[i:i + BATCH] for i in range(0, len(items), BATCH)]
    if not isinstance(index, EmbedsAhead) or len(batches) < 2:
        for batch in batches:
            index.upsert(batch)
            step(len(batch))
        return
    depth = max(1, min(AHEAD, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=depth, thread_name_prefix="memvet-embed") as workers:
        ahead = [workers.submit(index.embed_ahead, b) for b in batches[:depth]]
        for k, batch in enumerate(batches):
            ahead[k].result()
            if k + depth < len(batches):
                ahead.append(workers.submit(index.embed_ahead, batches[k + depth]))
            index.upsert(batch)
            step(len(batch))


def _counter(progress: Callable[[int, int], None] | None, start: int,
             total: int) -> Callable[[int], None]:
    """A step callback that reports (done so far, total) to `progress`."""
    done = start

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    return step
