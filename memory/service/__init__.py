"""MemoryService: the one facade every door (GraphQL, MCP, the CLI, the hooks) calls.

It is handed its adapters (recall index, equivalence matcher, extractor, event bus) and never
imports them. Every method takes the calling `Principal` and checks role and namespace scope
itself, so the human gate holds whichever door a request comes through. Methods are
synchronous (async callers run them in worker threads) except `review_events`.

Each method lives in the command group named here; the groups share the `ServiceContext`
(context.py: the store, the clock, the adapters, the write transaction) and nothing else.

| file | methods |
|---|---|
| intake.py | submit |
| turns.py | submit_turn, extraction_backlog |
| review.py | approve, reject, approve_many, reject_many, edit_candidate, update_memory, |
|           | delete_memory, archive_stale |
| reading.py | list_candidates, get_candidate, origins, own_origins, transitions, turn, |
|            | memory_of, get_memory, list_memories, memory_groups, queue_stats, namespaces |
| recall.py | recall, briefing, related |
| admin.py | policy, set_policy, active_persona, set_active_persona, archive_days, |
|          | set_archive_days, create_token, list_tokens, revoke_token, authenticate, |
|          | has_tokens, export_lines, import_lines, reconcile_index, drain_index_outbox, |
|          | index_model, record_index_model, build_index, candidate_texts, prune_vectors, |
|          | health |
| feed.py | review_events |
| here | start, close |

SQL lives in memory/store/, never here.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.engine import Engine

from memvet.memory.clock import Clock, utcnow
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind
from memvet.memory.limits import MAX_EXTRACTION_BACKLOG
from memvet.memory.ports import (
    CandidateMatcher,
    EventBus,
    Extractor,
    MemoryIndex,
    ProgressCallback,
)
from memvet.memory.service.admin import Administration
from memvet.memory.service.context import Adapters, ServiceContext
from memvet.memory.service.feed import ReviewFeed
from memvet.memory.service.indexing import ReconcileReport
from memvet.memory.service.intake import Intake
from memvet.memory.service.reading import Reading
from memvet.memory.service.recall import Recall
from memvet.memory.service.review import Review
from memvet.memory.service.turns import ExtractionPasses
from memvet.memory.store import candidates
from memvet.memory.store.settings import RuntimeSettings

__all__ = ["MemoryService"]


class MemoryService:
    """The domain facade; see the module docstring for where each method lives."""

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
        extraction_backlog_limit: int = MAX_EXTRACTION_BACKLOG,
    ) -> None:
        self.engine = engine
        self.index = index
        self._ctx = ctx = ServiceContext(
            engine=engine, adapters=Adapters(index, matcher, extractor, bus), clock=clock,
            settings=RuntimeSettings(engine, default_archive_days=default_archive_days,
                                     default_persona=default_persona),
            kind_weights=dict(kind_weights or DEFAULT_KIND_WEIGHTS),
            equivalence_threshold=equivalence_threshold, announce_index=announce_index)
        intake = Intake(ctx)
        self._passes = passes = ExtractionPasses(ctx, intake, workers=extraction_workers,
                                                 backlog_limit=extraction_backlog_limit)
        review = Review(ctx)
        reading = Reading(ctx, passes.backlog)
        recall = Recall(ctx, reading)
        admin = Administration(ctx, passes.backlog, self._reset_matcher)
        feed = ReviewFeed(ctx)

        # intake.py, turns.py
        self.submit = intake.submit
        self.submit_turn = passes.submit_turn
        self.extraction_backlog = passes.backlog
        # review.py
        self.approve = review.approve
        self.reject = review.reject
        self.approve_many = review.approve_many
        self.reject_many = review.reject_many
        self.edit_candidate = review.edit_candidate
        self.update_memory = review.update_memory
        self.delete_memory = review.delete_memory
        self.archive_stale = review.archive_stale
        # reading.py
        self.list_candidates = reading.list_candidates
        self.get_candidate = reading.get_candidate
        self.origins = reading.origins
        self.own_origins = reading.own_origins
        self.transitions = reading.transitions
        self.turn = reading.turn
        self.memory_of = reading.memory_of
        self.get_memory = reading.get_memory
        self.list_memories = reading.list_memories
        self.memory_groups = reading.memory_groups
        self.queue_stats = reading.queue_stats
        self.namespaces = reading.namespaces
        # recall.py
        self.recall = recall.recall
        self.briefing = recall.briefing
        self.related = recall.related
        # admin.py
        self.policy = admin.policy
        self.set_policy = admin.set_policy
        self.active_persona = admin.active_persona
        self.set_active_persona = admin.set_active_persona
        self.archive_days = admin.archive_days
        self.set_archive_days = admin.set_archive_days
        self.create_token = admin.create_token
        self.list_tokens = admin.list_tokens
        self.revoke_token = admin.revoke_token
        self.authenticate = admin.authenticate
        self.has_tokens = admin.has_tokens
        self.export_lines = admin.export_lines
        self.import_lines = admin.import_lines
        self.reconcile_index = admin.reconcile_index
        self.drain_index_outbox = admin.drain_index_outbox
        self.index_model = admin.index_model
        self.record_index_model = admin.record_index_model
        self.build_index = admin.build_index
        self.candidate_texts = admin.candidate_texts
        self.prune_vectors = admin.prune_vectors
        self.health = admin.health
        # feed.py
        self.review_events = feed.review_events

    def start(self, progress: ProgressCallback | None = None) -> ReconcileReport | None:
        """Warm the equivalence matcher and reconcile the recall index with the database."""
        self._reset_matcher()
        return self.reconcile_index(progress) if self._ctx.sync is not None else None

    def close(self) -> None:
        """Let queued extractions finish, then close the index."""
        self._passes.close()
        if self.index is not None:
            self.index.close()

    def _reset_matcher(self) -> None:
        matcher = self._ctx.adapters.matcher
        if matcher is not None:
            with self.engine.connect() as conn:
                matcher.reset(candidates.matcher_items(conn))
