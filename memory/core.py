"""The machinery under MemoryService: its adapters, write transactions (with what they publish
after commit) and intake. The facade itself (memory/service.py) is composed of this core and
the command groups in memory/passes.py, memory/reading.py and memory/admin.py.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from memvet.memory import intake, queries, review
from memvet.memory.access import Permission, Principal
from memvet.memory.clock import Clock, isoformat, utcnow
from memvet.memory.errors import ValidationError
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind, parse_kind
from memvet.memory.namespaces import resolve_namespace
from memvet.memory.policy import POLICY_ACTOR
from memvet.memory.ports import (
    CandidateMatcher,
    EventBus,
    Extractor,
    MemoryIndex,
    ReviewEvent,
)
from memvet.memory.records import (
    Candidate,
    CandidateInput,
    Outcome,
    Receipt,
    Source,
    Status,
    SubmitResult,
    candidate_from_row,
)
from memvet.memory.runtime import RuntimeSettings
from memvet.memory.sync import IndexSync, ReconcileReport
from memvet.memory.text import check_text

log = logging.getLogger(__name__)

MAX_PAGE = 500
MAX_QUERY_CHARS = 2000
MAX_RECALL_LIMIT = 100



@dataclass
class _Tx:
    """What a write transaction will publish once it commits."""

    conn: Connection
    events: list[ReviewEvent] = field(default_factory=list)
    matcher_add: list[Candidate] = field(default_factory=list)
    matcher_drop: list[str] = field(default_factory=list)
    touched_index: bool = False



class ServiceCore:
    """Adapters, transactions and intake: what every command group of the facade uses."""

    def __init__(
        self,
        *,
        engine: Engine,
        index: MemoryIndex | None = None,
        matcher: CandidateMatcher | None = None,
        extractor: Extractor | None = None,
        bus: EventBus | None = None,
        announce_index: Callable[[dict[str, list[str]]], None] | None = None,
        clock: Clock = utcnow,
        equivalence_threshold: float = 0.9,
        kind_weights: dict[Kind, float] | None = None,
        default_archive_days: int = 30,
        default_persona: str = "default",
        extraction_workers: int = 2,
        extraction_backlog_limit: int = 1000,
    ) -> None:
        self.engine = engine
        self.index = index
        self.matcher = matcher
        self.extractor = extractor
        self.bus = bus
        self.clock = clock
        self.equivalence_threshold = equivalence_threshold
        self.kind_weights = dict(kind_weights or DEFAULT_KIND_WEIGHTS)
        self.runtime = RuntimeSettings(
            engine, default_archive_days=default_archive_days, default_persona=default_persona
        )
        self._sync = IndexSync(engine, index, announce_index) if index is not None else None
        # SQLite has one writer; serialising writes here avoids busy-retry storms.
        self._write_lock = threading.RLock() if engine.dialect.name == "sqlite" else None
        self._extraction_pool = ThreadPoolExecutor(
            max_workers=max(1, extraction_workers), thread_name_prefix="memvet-extract"
        )
        self._backlog = 0
        self._backlog_limit = extraction_backlog_limit
        self._backlog_lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    def start(self, progress: Callable[[int, int], None] | None = None) -> ReconcileReport | None:
        """Warm the matcher and reconcile the index with the database."""
        if self.matcher is not None:
            with self.engine.connect() as conn:
                self.matcher.reset(queries.matcher_items(conn))
        return self.reconcile_index(progress) if self._sync is not None else None

    def close(self) -> None:
        self._extraction_pool.shutdown(wait=True, cancel_futures=False)
        if self.index is not None:
            self.index.close()

    # ------------------------------------------------------------------ index
    def reconcile_index(self, progress: Callable[[int, int], None] | None = None
                        ) -> ReconcileReport:
        if self._sync is None:
            raise ValidationError("no recall index is configured")
        return self._sync.reconcile(progress)

    def drain_index_outbox(self) -> int:
        return self._sync.drain() if self._sync is not None else 0

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def _write(self) -> Iterator[_Tx]:
        lock = self._write_lock
        if lock is not None:
            lock.acquire()
        try:
            with self.engine.begin() as conn:
                tx = _Tx(conn)
                yield tx
        finally:
            if lock is not None:
                lock.release()
        self._after_commit(tx)

    def _after_commit(self, tx: _Tx) -> None:
        if self.matcher is not None:
            try:
                if tx.matcher_drop:
                    self.matcher.discard(tx.matcher_drop)
                for cand in tx.matcher_add:
                    self.matcher.add(cand.id, cand.namespace, cand.kind, cand.content)
            except Exception:  # the matcher is an optimisation; the store stays right
                log.exception("equivalence matcher update failed")
        if tx.touched_index and self._sync is not None:
            self._sync.drain()
        if self.bus is not None:
            for event in tx.events:
                try:
                    self.bus.publish(event)
                except Exception:
                    log.exception("publishing review event %s failed", event.action)

    def _event(self, tx: _Tx, action: str, namespace: str, who: str, *,
               candidate_id: str | None = None, memory_id: str | None = None,
               **extra: object) -> None:
        tx.events.append(ReviewEvent(
            action=action, namespace=namespace, candidate_id=candidate_id,
            memory_id=memory_id, actor=who, at=isoformat(self.clock()), extra=dict(extra),
        ))

    def _lock_key(self, conn: Connection, namespace: str, kind: Kind, key: str) -> None:
        """PostgreSQL: serialise intake of the same text across workers."""
        if conn.dialect.name == "postgresql":
            conn.execute(
                text("SELECT pg_advisory_xact_lock(hashtext(:k))"),
                {"k": f"{namespace}|{kind.value}|{key}"},
            )

    # ------------------------------------------------------------------ intake
    def submit(self, item: CandidateInput, who: Principal) -> SubmitResult:
        """Propose a candidate (any source). Merges with its equivalent if there is one."""
        who.require(Permission.REVIEW if item.source is Source.MANUAL else Permission.SUBMIT)
        proposal = self._proposal(item, who)
        with self._write() as tx:
            result = self._intake(tx, proposal, who)
        return result

    def _proposal(self, item: CandidateInput, who: Principal) -> intake.Proposal:
        kind = parse_kind(item.kind)
        # The active persona costs a settings read: only when the namespace is left out.
        persona = "" if item.namespace and str(item.namespace).strip() else (
            self.runtime.active_persona())
        namespace = resolve_namespace(item.namespace, persona)
        who.require_namespace(namespace)
        return intake.Proposal(
            content=intake.clean_content(item.content),
            kind=kind,
            namespace=namespace,
            source=Source(item.source),
            confidence=intake.clean_confidence(item.confidence),
            origin=intake.clean_origin(item.origin),
            created_by=who.id,
        )

    def _intake(self, tx: _Tx, p: intake.Proposal, who: Principal) -> SubmitResult:
        conn, now = tx.conn, self.clock()
        key = intake.content_key(p.content)
        self._lock_key(conn, p.namespace, p.kind, key)
        existing = intake.find_exact(conn, p.namespace, p.kind, key)
        if existing is None and self.matcher is not None:
            match = self.matcher.find(
                p.namespace, p.kind, p.content, threshold=self.equivalence_threshold
            )
            if match is not None:
                row = intake.load_for_update(conn, match.candidate_id)
                if row and row["namespace"] == p.namespace and row["kind"] == p.kind.value:
                    existing = row
        if existing is None:
            cand = intake.insert_candidate(conn, p, who.actor, now)
            tx.matcher_add.append(cand)
            self._event(tx, "created", cand.namespace, who.actor, candidate_id=cand.id)
            outcome = Outcome.CREATED
        elif intake.seen_turn(conn, existing["id"], p.origin):
            cand = candidate_from_row(existing)
            return SubmitResult(cand, Outcome.DUPLICATE,
                                self._receipt(conn, cand, p, Outcome.DUPLICATE, who, now))
        else:
            cand, outcome, memory_id = intake.observe(conn, existing, p, who.actor, now)
            if outcome is Outcome.REVIVED:
                tx.matcher_add.append(cand)
            self._event(tx, "merged", cand.namespace, who.actor, candidate_id=cand.id,
                        memory_id=memory_id, outcome=outcome.value)
        auto = False
        if cand.status is Status.PENDING and self.runtime.policy(conn).qualifies(
            cand.kind, cand.namespace, cand.independent_observations, cand.confidence
        ):
            row = intake.load_for_update(conn, cand.id)
            assert row is not None
            memory = review.approve(conn, row, None, actor=POLICY_ACTOR, now=now,
                                    check_namespace=lambda ns: None)
            tx.touched_index = True
            self._event(tx, "approved", memory.namespace, POLICY_ACTOR,
                        candidate_id=cand.id, memory_id=memory.id)
            cand = queries.get_candidate(conn, cand.id) or cand
            auto = True
        receipt = self._receipt(conn, cand, p, outcome, who, now, auto_approved=auto)
        return SubmitResult(cand, outcome, receipt, auto)

    def _receipt(self, conn: Connection, cand: Candidate, p: intake.Proposal, outcome: Outcome,
                 who: Principal, now: datetime, *, auto_approved: bool = False) -> Receipt:
        """The caller's answer: what it sent, the outcome and the status, and nothing a
        reviewer or another caller wrote."""
        mine, mine_independent = intake.own_counts(conn, cand.id, who.id)
        return Receipt(
            candidate_id=cand.id, outcome=outcome, status=cand.status, content=p.content,
            kind=p.kind, namespace=p.namespace, source=p.source, confidence=p.confidence,
            observations=mine, independent_observations=mine_independent, observed_at=now,
            created_by=who.id if cand.created_by == who.id else None,
            readable=can_read(cand, who), auto_approved=auto_approved)


def can_read(cand: Candidate, who: Principal) -> bool:
    """A reviewer reads every candidate in its namespaces; an agent the ones it proposed."""
    if not who.sees(cand.namespace):
        return False
    return who.can(Permission.REVIEW) or cand.created_by == who.id


MAX_OFFSET = 1_000_000_000  # far past any real queue; keeps the SQL integer in range


def check_page(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0:
        raise ValidationError("offset must not be negative")
    if offset > MAX_OFFSET:
        raise ValidationError("offset is out of range")
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"page size must be between 1 and {MAX_PAGE}")
    return offset, limit


def clean_reason(reason: str | None) -> str | None:
    if reason is None:
        return None
    reason = check_text(reason, "reason").strip()
    if len(reason) > 2000:
        raise ValidationError("reason is over 2000 characters")
    return reason or None

