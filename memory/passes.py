"""The extraction passes: a turn or a stretch about to be compacted goes in, candidates come out."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import insert, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from memvet.memory import intake, queries, store
from memvet.memory.access import Permission, Principal
from memvet.memory.core import ServiceCore, can_read
from memvet.memory.errors import MemvetError, ValidationError
from memvet.memory.namespaces import Namespace, validate_slug
from memvet.memory.ports import (
    ExtractedCandidate,
    ExtractionContext,
    Extractor,
)
from memvet.memory.records import (
    CandidateInput,
    OriginInput,
    Outcome,
    Receipt,
    Source,
    SubmitResult,
    Turn,
)
from memvet.memory.turns import TurnSubmission, validate_submission

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnResult:
    turn: Turn
    results: list[SubmitResult]
    queued: bool
    duplicate: bool



class ExtractionPasses(ServiceCore):
    """submit_turn and the background queue for slow (LLM) extractors."""

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
            # Only this caller's own earlier submission makes a duplicate: another token
            # replaying the ids gets a turn of its own and learns nothing of the first.
            found = queries.find_turn(conn, sub.conversation_id, sub.turn_id, sub.trigger,
                                      created_by=who.id)
            if found is not None:
                return TurnResult(found, self._resubmitted(conn, found, who),
                                  queued=found.status == "queued", duplicate=True)
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

    def _resubmitted(self, conn: Connection, turn: Turn, who: Principal) -> list[SubmitResult]:
        """Receipts for what this caller's turn produced the first time, counted once."""
        results = []
        for origin in queries.origins_of_turn(conn, turn.id):
            cand = queries.get_candidate(conn, origin.candidate_id)
            if cand is None or origin.created_by != who.id:
                continue
            mine, mine_independent = intake.own_counts(conn, cand.id, who.id)
            receipt = Receipt(
                candidate_id=cand.id, outcome=Outcome.DUPLICATE, status=cand.status,
                content=origin.content or "", kind=origin.kind or cand.kind,
                namespace=origin.namespace or cand.namespace, source=origin.source,
                confidence=origin.confidence, observations=mine,
                independent_observations=mine_independent, observed_at=origin.created_at,
                created_by=who.id if cand.created_by == who.id else None,
                readable=can_read(cand, who))
            results.append(SubmitResult(cand, Outcome.DUPLICATE, receipt))
        return results

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

