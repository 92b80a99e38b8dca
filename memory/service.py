"""MemoryService: the one facade every interface (GraphQL, MCP, CLI, hooks) calls.

It is handed its adapters (index, matcher, extractor, event bus) and never imports them.
Every method takes the calling `Principal` and checks role and namespace scope itself, so
the human gate holds whichever door a request comes through. Methods are synchronous;
async callers run them in worker threads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import insert, select, text, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from memory import intake, queries, review, store, transfer
from memory import tokens as token_store
from memory.access import Permission, Principal, Role
from memory.clock import Clock, isoformat, utcnow
from memory.errors import MemvetError, NotFound, ValidationError
from memory.kinds import DEFAULT_KIND_WEIGHTS, Kind, parse_kind
from memory.namespaces import Namespace, resolve_namespace, validate_slug
from memory.policy import POLICY_ACTOR, AutoApprovePolicy
from memory.ports import (
    CandidateMatcher,
    ExtractedCandidate,
    ExtractionContext,
    Extractor,
    MemoryIndex,
    ReviewEvent,
)
from memory.records import (
    Candidate,
    CandidateEdit,
    CandidateInput,
    Memory,
    Origin,
    OriginInput,
    Outcome,
    Page,
    QueueStats,
    RecallHit,
    Source,
    Status,
    SubmitResult,
    Transition,
    Turn,
    candidate_from_row,
)
from memory.runtime import RuntimeSettings
from memory.sync import IndexSync, ReconcileReport
from memory.turns import TurnSubmission, validate_submission

log = logging.getLogger(__name__)

MAX_PAGE = 500
MAX_QUERY_CHARS = 2000
MAX_RECALL_LIMIT = 100


@dataclass(frozen=True)
class TurnResult:
    turn: Turn
    results: list[SubmitResult]
    queued: bool
    duplicate: bool


@dataclass
class _Tx:
    """What a write transaction will publish once it commits."""

    conn: Connection
    events: list[ReviewEvent] = field(default_factory=list)
    matcher_add: list[Candidate] = field(default_factory=list)
    matcher_drop: list[str] = field(default_factory=list)
    touched_index: bool = False


class MemoryService:
    """The domain facade: intake, review, recall, policy, tokens, audit."""

    def __init__(
        self,
        *,
        engine: Engine,
        index: MemoryIndex | None = None,
        matcher: CandidateMatcher | None = None,
        extractor: Extractor | None = None,
        publish: Callable[[ReviewEvent], None] | None = None,
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
        self._publish = publish
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
        if self._publish is not None:
            for event in tx.events:
                try:
                    self._publish(event)
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
            return SubmitResult(candidate_from_row(existing), Outcome.DUPLICATE)
        else:
            cand, outcome, memory_id = intake.observe(conn, existing, p, who.actor, now)
            if outcome is Outcome.REVIVED:
                tx.matcher_add.append(cand)
            self._event(tx, "merged", cand.namespace, who.actor, candidate_id=cand.id,
                        memory_id=memory_id, outcome=outcome.value)
        auto = False
        if cand.status is Status.PENDING and self.runtime.policy(conn).qualifies(
            cand.kind, cand.namespace, cand.observations, cand.confidence
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
        return SubmitResult(cand, outcome, auto)

    # ------------------------------------------------------------------ extraction passes
    def submit_turn(self, sub: TurnSubmission, who: Principal) -> TurnResult:
        """Store a turn (or a stretch about to be compacted) and extract candidates from it.

        Idempotent per (conversation, turn, trigger). A background extractor (an LLM) runs
        off the caller's path; the result then says `queued`.
        """
        who.require(Permission.SUBMIT)
        sub = validate_submission(sub)
        persona = validate_slug(sub.persona, what="persona") if sub.persona else (
            self.runtime.active_persona())
        workspace = None
        if sub.workspace:
            workspace = Namespace.workspace(sub.workspace).name
            who.require_namespace(f"workspace:{workspace}")
        with self.engine.connect() as conn:
            found = queries.find_turn(conn, sub.conversation_id, sub.turn_id, sub.trigger)
            if found is not None:
                same = [SubmitResult(c, Outcome.DUPLICATE)
                        for c in queries.candidates_of_turn(conn, found.id)]
                return TurnResult(found, same, queued=found.status == "queued",
                                  duplicate=True)
        extractor = self.extractor
        background = bool(extractor is not None and getattr(extractor, "background", False))
        if background:
            self._reserve_backlog()
        turn_ref = intake.new_id()
        try:
            with self._write() as tx:
                tx.conn.execute(insert(store.turns).values(
                    id=turn_ref, conversation_id=sub.conversation_id, turn_id=sub.turn_id,
                    trigger=sub.trigger, workspace=workspace, persona=persona,
                    messages=[{"role": m.role, "content": m.content} for m in sub.messages],
                    extractor=getattr(extractor, "name", None),
                    status="queued" if background else "done",
                    created_by=who.id, created_at=self.clock(),
                ))
        except IntegrityError:
            # The same turn arrived twice at once and the other one won: it counts once.
            if background:
                self._release_backlog()
            return self.submit_turn(sub, who)
        except BaseException:
            if background:
                self._release_backlog()
            raise
        context = ExtractionContext(workspace=workspace, persona=persona, trigger=sub.trigger)
        if background and extractor is not None:
            self._queue_extraction(extractor, sub, context, turn_ref, who)
            results: list[SubmitResult] = []
        else:
            found_items = extractor.extract(sub.messages, context) if extractor else []
            results = self._intake_extracted(found_items, sub, turn_ref, who)
        with self.engine.connect() as conn:
            turn = queries.get_turn(conn, turn_ref)
        assert turn is not None
        return TurnResult(turn, results, queued=background, duplicate=False)

    def _reserve_backlog(self) -> None:
        with self._backlog_lock:
            if self._backlog >= self._backlog_limit:
                raise ValidationError("the extraction backlog is full; try again later")
            self._backlog += 1

    def _release_backlog(self) -> None:
        with self._backlog_lock:
            self._backlog -= 1

    def _queue_extraction(self, extractor: Extractor, sub: TurnSubmission,
                          context: ExtractionContext, turn_ref: str, who: Principal) -> None:
        """Run a slow extractor off the caller's path; its backlog slot is already held."""

        def run() -> None:
            status = "done"
            try:
                items = extractor.extract(sub.messages, context)
                self._intake_extracted(items, sub, turn_ref, who)
            except Exception:
                status = "failed"
                log.exception("background extraction of turn %s failed", turn_ref)
            finally:
                self._release_backlog()
                self._set_turn_status(turn_ref, status)

        self._extraction_pool.submit(run)

    def _set_turn_status(self, turn_ref: str, status: str) -> None:
        with self._write() as tx:
            tx.conn.execute(update(store.turns).where(store.turns.c.id == turn_ref)
                            .values(status=status))

    def _intake_extracted(self, items: Sequence[ExtractedCandidate], sub: TurnSubmission,
                          turn_ref: str, who: Principal) -> list[SubmitResult]:
        source = Source.COMPACTION if sub.trigger == "compaction" else Source.TURN
        results: list[SubmitResult] = []
        for item in items:
            try:
                proposal = self._proposal(CandidateInput(
                    content=item.content, kind=item.kind, namespace=item.namespace,
                    source=source, confidence=item.confidence,
                    origin=OriginInput(sub.conversation_id, sub.turn_id, item.excerpt, turn_ref),
                ), who)
            except MemvetError as exc:  # a ghost kind, a bad namespace, a foreign scope
                log.info("dropped an extracted candidate: %s", exc)
                continue
            with self._write() as tx:
                results.append(self._intake(tx, proposal, who))
        return results

    def extraction_backlog(self) -> int:
        return self._backlog

    # ------------------------------------------------------------------ review
    def approve(self, candidate_id: str, who: Principal, *, edit: CandidateEdit | None = None,
                supersede: str | None = None, reason: str | None = None) -> Memory:
        """Approve a pending candidate (with the reviewer's edits); optionally retire the
        memory it supersedes in the same transaction."""
        who.require(Permission.REVIEW)
        with self._write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_namespace(row["namespace"])
            memory = review.approve(tx.conn, row, edit, actor=who.actor, now=self.clock(),
                                    check_namespace=who.require_namespace)
            tx.touched_index = True
            if memory.content != row["content"] or memory.namespace != row["namespace"]:
                tx.matcher_drop.append(candidate_id)
                tx.matcher_add.append(queries.get_candidate(tx.conn, candidate_id))  # type: ignore[arg-type]  # exists: just updated
            self._event(tx, "approved", memory.namespace, who.actor, candidate_id=candidate_id,
                        memory_id=memory.id)
            if supersede:
                old = review.get_memory_row(tx.conn, supersede)
                who.require_namespace(old["namespace"])
                gone = review.delete_memory(
                    tx.conn, old, reason or f"superseded by memory {memory.id}",
                    actor=who.actor, now=self.clock())
                self._event(tx, "memory_deleted", gone.namespace, who.actor,
                            candidate_id=gone.candidate_id, memory_id=gone.id,
                            superseded_by=memory.id, content=gone.content[:2000],
                            kind=gone.kind.value)
        return memory

    def reject(self, candidate_id: str, who: Principal, reason: str | None = None) -> Candidate:
        who.require(Permission.REVIEW)
        reason = _clean_reason(reason)
        with self._write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_namespace(row["namespace"])
            cand = review.reject(tx.conn, row, reason, actor=who.actor, now=self.clock())
            self._event(tx, "rejected", cand.namespace, who.actor, candidate_id=cand.id)
        return cand

    def edit_candidate(self, candidate_id: str, edit: CandidateEdit, who: Principal) -> Candidate:
        who.require(Permission.REVIEW)
        if edit.is_empty():
            raise ValidationError("an edit must change content, kind or namespace")
        with self._write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_namespace(row["namespace"])
            cand = review.edit_candidate(tx.conn, row, edit, actor=who.actor, now=self.clock(),
                                         check_namespace=who.require_namespace)
            tx.matcher_drop.append(cand.id)
            tx.matcher_add.append(cand)
            self._event(tx, "edited", cand.namespace, who.actor, candidate_id=cand.id)
        return cand

    def update_memory(self, memory_id: str, edit: CandidateEdit, who: Principal) -> Memory:
        who.require(Permission.REVIEW)
        if edit.is_empty():
            raise ValidationError("an edit must change content, kind or namespace")
        with self._write() as tx:
            mem = review.get_memory_row(tx.conn, memory_id)
            who.require_namespace(mem["namespace"])
            memory = review.update_memory(tx.conn, mem, edit, actor=who.actor, now=self.clock(),
                                          check_namespace=who.require_namespace)
            tx.touched_index = True
            self._event(tx, "memory_updated", memory.namespace, who.actor,
                        candidate_id=memory.candidate_id, memory_id=memory.id)
        return memory

    def delete_memory(self, memory_id: str, who: Principal, reason: str | None = None) -> Memory:
        who.require(Permission.REVIEW)
        reason = _clean_reason(reason)
        with self._write() as tx:
            mem = review.get_memory_row(tx.conn, memory_id)
            who.require_namespace(mem["namespace"])
            gone = review.delete_memory(tx.conn, mem, reason, actor=who.actor, now=self.clock())
            tx.touched_index = True
            self._event(tx, "memory_deleted", gone.namespace, who.actor,
                        candidate_id=gone.candidate_id, memory_id=gone.id,
                        content=gone.content[:2000], kind=gone.kind.value)
        return gone

    def archive_stale(self, who: Principal, older_than_days: int | None = None) -> list[Candidate]:
        """Archive pending candidates untouched for the archive window (or `older_than_days`).

        A scoped reviewer archives only inside its namespaces."""
        who.require(Permission.REVIEW)
        days = self.runtime.archive_days() if older_than_days is None else older_than_days
        if not isinstance(days, int) or days < 0 or days > 3650:
            raise ValidationError("older_than_days must be between 0 and 3650")
        with self._write() as tx:
            archived = [
                c for c in review.archive_stale(
                    tx.conn, older_than=timedelta(days=days), actor=who.actor, now=self.clock(),
                    only=who.namespaces)
            ]
            tx.matcher_drop.extend(c.id for c in archived)
            for c in archived:
                self._event(tx, "archived", c.namespace, who.actor, candidate_id=c.id)
        return archived

    # ------------------------------------------------------------------ reading
    def list_candidates(
        self, who: Principal, *, statuses: Sequence[Status] | None = None,
        namespaces: Sequence[str] | None = None, kinds: Sequence[Kind] | None = None,
        sources: Sequence[Source] | None = None, order: str = "newest",
        offset: int = 0, limit: int = 50,
    ) -> Page[Candidate]:
        """The queue. Agents see only what they proposed; scoped tokens only their namespaces."""
        who.require(Permission.READ_OWN)
        visible = who.visible([str(Namespace.parse(n)) for n in namespaces]
                              if namespaces is not None else None)
        created_by = None if who.can(Permission.REVIEW) else who.id
        offset, limit = _bounds(offset, limit)
        if order not in queries.CANDIDATE_ORDERS:
            raise ValidationError(
                f"order must be one of {', '.join(queries.CANDIDATE_ORDERS)}")
        f = queries.CandidateFilter(statuses=statuses, namespaces=visible, kinds=kinds,
                                    sources=sources, created_by=created_by, order=order)
        with self.engine.connect() as conn:
            return queries.list_candidates(conn, f, offset=offset, limit=limit)

    def get_candidate(self, candidate_id: str, who: Principal) -> Candidate:
        who.require(Permission.READ_OWN)
        with self.engine.connect() as conn:
            cand = queries.get_candidate(conn, candidate_id)
        if cand is None or not self._can_read(cand, who):
            raise NotFound(f"no candidate with id {candidate_id!r}")
        return cand

    def _can_read(self, cand: Candidate, who: Principal) -> bool:
        if not who.sees(cand.namespace):
            return False
        return who.can(Permission.REVIEW) or cand.created_by == who.id

    def origins(self, candidate_id: str, who: Principal) -> list[Origin]:
        self.get_candidate(candidate_id, who)
        with self.engine.connect() as conn:
            return queries.origins(conn, candidate_id)

    def transitions(self, candidate_id: str, who: Principal) -> list[Transition]:
        self.get_candidate(candidate_id, who)
        with self.engine.connect() as conn:
            return queries.transitions(conn, candidate_id)

    def turn(self, turn_ref: str, who: Principal) -> Turn:
        """The stored exchange behind an origin (for 'jump to the original turn')."""
        who.require(Permission.READ_OWN)
        with self.engine.connect() as conn:
            turn = queries.get_turn(conn, turn_ref)
            if turn is None:
                raise NotFound(f"no turn with id {turn_ref!r}")
            if not who.can(Permission.REVIEW) and turn.created_by != who.id:
                raise NotFound(f"no turn with id {turn_ref!r}")
            if who.namespaces is not None:
                linked = queries.candidates_of_turn(conn, turn.id)
                spaces = {c.namespace for c in linked}
                if turn.workspace:
                    spaces.add(f"workspace:{turn.workspace}")
                if not spaces or not all(who.sees(ns) for ns in spaces):
                    raise NotFound(f"no turn with id {turn_ref!r}")
        return turn

    def memory_of(self, candidate_id: str, who: Principal) -> Memory | None:
        cand = self.get_candidate(candidate_id, who)
        with self.engine.connect() as conn:
            return queries.memory_for_candidate(conn, cand.id)

    def get_memory(self, memory_id: str, who: Principal) -> Memory:
        who.require(Permission.REVIEW)
        with self.engine.connect() as conn:
            mem = queries.get_memory(conn, memory_id)
        if mem is None or not who.sees(mem.namespace):
            raise NotFound(f"no memory with id {memory_id!r}")
        return mem

    def list_memories(self, who: Principal, *, namespaces: Sequence[str] | None = None,
                      kinds: Sequence[Kind] | None = None, offset: int = 0,
                      limit: int = 50) -> Page[Memory]:
        who.require(Permission.REVIEW)
        visible = who.visible([str(Namespace.parse(n)) for n in namespaces]
                              if namespaces is not None else None)
        offset, limit = _bounds(offset, limit)
        with self.engine.connect() as conn:
            return queries.list_memories(conn, namespaces=visible, kinds=kinds,
                                         offset=offset, limit=limit)

    def memory_groups(self, who: Principal, *, per_group: int = 200) -> dict[str, list[Memory]]:
        """Approved memories grouped by namespace (the dashboard's approved view)."""
        who.require(Permission.REVIEW)
        groups: dict[str, list[Memory]] = {}
        with self.engine.connect() as conn:
            for ns in queries.memory_namespaces(conn):
                if who.sees(ns):
                    groups[ns] = queries.list_memories(
                        conn, namespaces=[ns], kinds=None, offset=0, limit=per_group).items
        return groups

    def queue_stats(self, who: Principal) -> QueueStats:
        who.require(Permission.REVIEW)
        scope = sorted(who.namespaces) if who.namespaces is not None else None
        with self.engine.connect() as conn:
            counts = queries.status_counts(conn, scope)
            mems = queries.memory_counts(conn)
            by_ns = queries.pending_by_namespace(conn, scope)
        return QueueStats(
            pending=counts.get("pending", 0), approved=counts.get("approved", 0),
            rejected=counts.get("rejected", 0), archived=counts.get("archived", 0),
            memories=sum(n for ns, n in mems.items() if who.sees(ns)),
            pending_by_namespace=by_ns, extraction_backlog=self._backlog,
        )

    def namespaces(self, who: Principal) -> list[str]:
        """Every namespace that has candidates or memories and that the caller may see."""
        who.require(Permission.READ_OWN)
        with self.engine.connect() as conn:
            c = store.candidates.c
            found = {r[0] for r in conn.execute(select(c.namespace).distinct())}
            found.update(queries.memory_namespaces(conn))
        return sorted(ns for ns in found if who.sees(ns))

    # ------------------------------------------------------------------ recall
    def recall(self, query: str, who: Principal, *, namespaces: Sequence[str] | None = None,
               kinds: Sequence[Kind | str] | None = None, limit: int = 10) -> list[RecallHit]:
        """Semantic + lexical search over approved memories the caller may read."""
        who.require(Permission.RECALL)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ValidationError(f"query is over {MAX_QUERY_CHARS} characters")
        if not 1 <= limit <= MAX_RECALL_LIMIT:
            raise ValidationError(f"limit must be between 1 and {MAX_RECALL_LIMIT}")
        kind_list = [parse_kind(k) for k in kinds] if kinds else None
        wanted = who.visible([str(Namespace.parse(n)) for n in namespaces]
                             if namespaces else None)
        with self.engine.connect() as conn:
            spaces = wanted if wanted is not None else [
                ns for ns in queries.memory_namespaces(conn) if who.sees(ns)]
        if not spaces or self.index is None:
            return []
        hits = self.index.search(query.strip(), spaces, kinds=kind_list, limit=limit,
                                 kind_weights=self.kind_weights)
        with self.engine.connect() as conn:
            # The database decides: a hit the index still holds but the store no longer
            # does (a crash mid-delete) is never served.
            found = queries.get_memories(conn, [h.memory_id for h in hits])
        result = []
        for h in hits:
            mem = found.get(h.memory_id)
            if mem is None or mem.namespace not in spaces:
                continue
            result.append(RecallHit(memory=mem, score=h.score, dense=h.dense,
                                    lexical=h.lexical, fused=h.fused, kind_weight=h.kind_weight))
        return result

    def briefing(self, who: Principal, *, workspace: str | None = None,
                 persona: str | None = None, limit: int = 100) -> list[Memory]:
        """What an agent should know at session start in `workspace:<workspace>` and
        `persona:<persona>` (default: the active persona), as far as it may read them:
        decisions and postmortems first, then the most observed, then the newest."""
        who.require(Permission.RECALL)
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationError(f"limit must be between 1 and {MAX_PAGE}")
        wanted = [str(Namespace.persona(persona or self.runtime.active_persona()))]
        if workspace:
            wanted.insert(0, str(Namespace.workspace(workspace)))
        spaces = [ns for ns in wanted if who.sees(ns)]
        if not spaces:
            return []
        with self.engine.connect() as conn:
            return queries.briefing(conn, spaces, limit)

    def related(self, candidate_id: str, who: Principal, limit: int = 5) -> list[RecallHit]:
        """The approved memories closest to a candidate, in its namespace (before approving)."""
        cand = self.get_candidate(candidate_id, who)
        if not who.can(Permission.RECALL):
            return []
        hits = self.recall(cand.content[:MAX_QUERY_CHARS], who, namespaces=[cand.namespace],
                           limit=limit)
        return [h for h in hits if h.memory.candidate_id != cand.id]

    # ------------------------------------------------------------------ index
    def reconcile_index(self, progress: Callable[[int, int], None] | None = None
                        ) -> ReconcileReport:
        if self._sync is None:
            raise ValidationError("no recall index is configured")
        return self._sync.reconcile(progress)

    def drain_index_outbox(self) -> int:
        return self._sync.drain() if self._sync is not None else 0

    # ------------------------------------------------------------------ settings
    def policy(self, who: Principal) -> AutoApprovePolicy:
        who.require(Permission.REVIEW)
        with self.engine.connect() as conn:
            return self.runtime.policy(conn)

    def set_policy(self, policy: AutoApprovePolicy, who: Principal) -> AutoApprovePolicy:
        """Change the auto-approve policy; pending candidates that now qualify are promoted."""
        who.require(Permission.ADMIN)
        with self._write() as tx:
            self.runtime.set(tx.conn, "auto_approve_policy", policy.to_json(), who.actor,
                             self.clock())
            self._event(tx, "policy_changed", "", who.actor, enabled=policy.enabled)
        if policy.enabled:
            self._promote_qualifying()
        return policy

    def _promote_qualifying(self) -> None:
        with self._write() as tx:
            policy = self.runtime.policy(tx.conn)
            rows = tx.conn.execute(select(store.candidates).where(
                store.candidates.c.status == Status.PENDING.value)).mappings().all()
            for row in rows:
                if policy.qualifies(Kind(row["kind"]), row["namespace"], row["observations"],
                                    float(row["confidence"])):
                    memory = review.approve(tx.conn, dict(row), None, actor=POLICY_ACTOR,
                                            now=self.clock(), check_namespace=lambda ns: None)
                    tx.touched_index = True
                    self._event(tx, "approved", memory.namespace, POLICY_ACTOR,
                                candidate_id=row["id"], memory_id=memory.id)

    def active_persona(self, who: Principal) -> str:
        who.require(Permission.READ_OWN)
        return self.runtime.active_persona()

    def set_active_persona(self, name: str, who: Principal) -> str:
        who.require(Permission.ADMIN)
        name = validate_slug(str(name).strip(), what="persona name")
        with self._write() as tx:
            self.runtime.set(tx.conn, "active_persona", name, who.actor, self.clock())
        return name

    def archive_days(self, who: Principal) -> int:
        who.require(Permission.REVIEW)
        return self.runtime.archive_days()

    def set_archive_days(self, days: int, who: Principal) -> int:
        who.require(Permission.ADMIN)
        if not isinstance(days, int) or not 1 <= days <= 3650:
            raise ValidationError("the archive window must be between 1 and 3650 days")
        with self._write() as tx:
            self.runtime.set(tx.conn, "archive_days", days, who.actor, self.clock())
        return days

    # ------------------------------------------------------------------ tokens
    def create_token(self, role: Role | str, who: Principal, *,
                     namespaces: Sequence[str] | None = None,
                     name: str | None = None) -> tuple[token_store.TokenInfo, str]:
        who.require(Permission.ADMIN)
        with self._write() as tx:
            return token_store.create(tx.conn, role=token_store.parse_role(str(role)),
                                      namespaces=namespaces, name=name, now=self.clock())

    def list_tokens(self, who: Principal) -> list[token_store.TokenInfo]:
        who.require(Permission.ADMIN)
        with self.engine.connect() as conn:
            return token_store.list_tokens(conn)

    def revoke_token(self, token_id: str, who: Principal) -> token_store.TokenInfo:
        who.require(Permission.ADMIN)
        with self._write() as tx:
            return token_store.revoke(tx.conn, token_id, self.clock())

    def authenticate(self, plaintext: str) -> Principal | None:
        with self.engine.connect() as conn:
            return token_store.authenticate(conn, plaintext)

    def has_tokens(self) -> bool:
        with self.engine.connect() as conn:
            return token_store.count_active(conn) > 0

    # ------------------------------------------------------------------ export / import
    def export_lines(self, who: Principal) -> Iterator[str]:
        """Everything as JSON Lines (see memory/transfer.py). Admin only."""
        who.require(Permission.ADMIN)
        with self.engine.connect() as conn:
            yield from transfer.export_lines(conn)

    def import_lines(self, lines: Iterable[str], who: Principal) -> transfer.ImportReport:
        """Import JSON Lines, all or nothing; imported memories become recallable."""
        who.require(Permission.ADMIN)
        with self._write() as tx:
            report = transfer.import_lines(tx.conn, lines, now=self.clock())
            tx.touched_index = bool(report.memory_ids)
        if self.matcher is not None:
            with self.engine.connect() as conn:
                self.matcher.reset(queries.matcher_items(conn))
        return report


def _bounds(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0:
        raise ValidationError("offset must not be negative")
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"page size must be between 1 and {MAX_PAGE}")
    return offset, limit


def _clean_reason(reason: str | None) -> str | None:
    if reason is None:
        return None
    reason = reason.strip()
    if len(reason) > 2000:
        raise ValidationError("reason is over 2000 characters")
    return reason or None
