"""What every command group of the service works with: the store, the clock, the adapters, the
settings a person changes at run time, and the one way to write.

A write is a transaction (`ServiceContext.write()`) that collects what it will publish once it
commits: review events for the bus, candidates the equivalence matcher gains or loses, and
whether the recall index owes work (the outbox rows are in the transaction itself). Nothing is
published for a transaction that rolled back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection, Engine

from memvet.memory.clock import Clock, isoformat
from memvet.memory.kinds import Kind
from memvet.memory.ports import (
    CandidateMatcher,
    EventBus,
    Extractor,
    MemoryIndex,
    ReviewEvent,
)
from memvet.memory.records import Candidate
from memvet.memory.service.indexing import IndexNotify, IndexSync
from memvet.memory.store.settings import RuntimeSettings

log = logging.getLogger(__name__)


@dataclass
class Tx:
    """One write transaction and what it will publish once it commits."""

    conn: Connection
    events: list[ReviewEvent] = field(default_factory=list)
    matcher_add: list[Candidate] = field(default_factory=list)
    matcher_drop: list[str] = field(default_factory=list)
    touched_index: bool = False


@dataclass(frozen=True)
class Adapters:
    """The ports the core was handed (any may be missing: a CLI command needs no index)."""

    index: MemoryIndex | None = None
    matcher: CandidateMatcher | None = None
    extractor: Extractor | None = None
    bus: EventBus | None = None


class ServiceContext:
    """Shared by the command groups; built once by MemoryService."""

    def __init__(self, *, engine: Engine, adapters: Adapters, clock: Clock,
                 settings: RuntimeSettings, kind_weights: dict[Kind, float],
                 equivalence_threshold: float,
                 announce_index: IndexNotify | None = None) -> None:
        self.engine = engine
        self.adapters = adapters
        self.clock = clock
        self.settings = settings
        self.kind_weights = kind_weights
        self.equivalence_threshold = equivalence_threshold
        self.sync = (IndexSync(engine, adapters.index, announce_index)
                     if adapters.index is not None else None)
        # SQLite has one writer; serialising writes here avoids busy-retry storms.
        self._write_lock = threading.RLock() if engine.dialect.name == "sqlite" else None
        self._deferred = threading.local()  # a bulk command drains the outbox once, at its end

    @contextmanager
    def write(self) -> Iterator[Tx]:
        """A write transaction; what it collected is published after it commits."""
        lock = self._write_lock
        if lock is not None:
            lock.acquire()
        try:
            with self.engine.begin() as conn:
                tx = Tx(conn)
                yield tx
        finally:
            if lock is not None:
                lock.release()
        self._after_commit(tx)

    @contextmanager
    def index_once(self) -> Iterator[None]:
        """Writes inside this block leave the recall index's work to its end: one drain, so
        the index embeds and writes the whole batch together (bulk approve, import)."""
        outer = getattr(self._deferred, "active", False)
        self._deferred.active = True
        try:
            yield
        finally:
            self._deferred.active = outer
        if not outer and self.sync is not None:
            self.sync.drain()

    def event(self, tx: Tx, action: str, namespace: str, actor: str, *,
              candidate_id: str | None = None, memory_id: str | None = None,
              **extra: object) -> None:
        """Queue a review event for after the commit."""
        tx.events.append(ReviewEvent(
            action=action, namespace=namespace, candidate_id=candidate_id,
            memory_id=memory_id, actor=actor, at=isoformat(self.clock()), extra=dict(extra),
        ))

    def _after_commit(self, tx: Tx) -> None:
        matcher, bus = self.adapters.matcher, self.adapters.bus
        if matcher is not None:
            try:
                if tx.matcher_drop:
                    matcher.discard(tx.matcher_drop)
                for cand in tx.matcher_add:
                    matcher.add(cand.id, cand.namespace, cand.kind, cand.content)
            except Exception:  # the matcher is an optimisation; the store stays right
                log.exception("equivalence matcher update failed")
        if tx.touched_index and self.sync is not None and not getattr(
                self._deferred, "active", False):
            self.sync.drain()
        if bus is not None:
            for event in tx.events:
                try:
                    bus.publish(event)
                except Exception:
                    log.exception("publishing review event %s failed", event.action)


Backlog = Callable[[], int]
