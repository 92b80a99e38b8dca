"""The extraction passes: a turn, or a stretch about to be compacted, goes in and its extracted
candidates go through intake. A slow extractor (an LLM) runs in a bounded background pool off
the caller's path; the backlog is this group's own."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from memvet.memory.access import Permission, Principal
from memvet.memory.errors import MemvetError, ValidationError
from memvet.memory.messages import validate_submission
from memvet.memory.namespaces import Namespace, validate_slug
from memvet.memory.ports import ExtractedCandidate, ExtractionContext, Extractor
from memvet.memory.proposals import Proposal
from memvet.memory.records import (
    CandidateInput,
    OriginInput,
    Outcome,
    Source,
    SubmitResult,
    Turn,
    TurnResult,
    TurnSubmission,
)
from memvet.memory.service.context import ServiceContext
from memvet.memory.service.intake import Intake, receipt
from memvet.memory.store import candidates, turns
from memvet.memory.store.tables import new_id

log = logging.getLogger(__name__)


class ExtractionPasses:
    """submit_turn, and the background queue for slow extractors."""

    def __init__(self, ctx: ServiceContext, intake: Intake, *, workers: int,
                 backlog_limit: int) -> None:
        self._ctx = ctx
        self._intake = intake
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers),
                                        thread_name_prefix="memvet-extract")
        self._backlog = 0
        self._backlog_limit = backlog_limit
        self._backlog_lock = threading.Lock()

    def close(self) -> None:
        """Finish what is queued, then stop the pool."""
        self._pool.shutdown(wait=True, cancel_futures=False)

    def backlog(self) -> int:
        """Turns waiting for (or in) the background extractor."""
        return self._backlog

    def submit_turn(self, sub: TurnSubmission, who: Principal) -> TurnResult:
        """Store a turn (or a stretch about to be compacted) and extract candidates from it.

        Idempotent per (conversation, turn, trigger) and token. A background extractor (an
        LLM) runs off the caller's path; the result then says `queued`.
        """
        who.require(Permission.SUBMIT)
        ctx = self._ctx
        sub = validate_submission(sub)
        persona = validate_slug(sub.persona, what="persona") if sub.persona else (
            ctx.settings.active_persona())
        workspace = None
        if sub.workspace:
            workspace = Namespace.workspace(sub.workspace).name
            who.require_namespace(f"workspace:{workspace}")
        with ctx.engine.connect() as conn:
            # Only this caller's own earlier submission makes a duplicate: another token
            # replaying the ids gets a turn of its own and learns nothing of the first.
            found = turns.find_turn(conn, sub.conversation_id, sub.turn_id, sub.trigger,
                                    created_by=who.id)
            if found is not None:
                return TurnResult(found, self._resubmitted(conn, found, who),
                                  queued=found.status == "queued", duplicate=True)
        extractor = ctx.adapters.extractor
        background = bool(extractor is not None and getattr(extractor, "background", False))
        if background:
            self._reserve_backlog()
        turn_ref = new_id()
        try:
            with ctx.write() as tx:
                turns.insert_turn(tx.conn, turn_ref=turn_ref, sub=sub, workspace=workspace,
                                  persona=persona, extractor=getattr(extractor, "name", None),
                                  status="queued" if background else "done",
                                  created_by=who.id, now=ctx.clock())
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
            self._queue(extractor, sub, context, turn_ref, who)
            results: list[SubmitResult] = []
        else:
            found_items = extractor.extract(sub.messages, context) if extractor else []
            results = self._take(found_items, sub, turn_ref, who)
        with ctx.engine.connect() as conn:
            turn = turns.get_turn(conn, turn_ref)
        assert turn is not None
        return TurnResult(turn, results, queued=background, duplicate=False)

    def _resubmitted(self, conn: Connection, turn: Turn, who: Principal) -> list[SubmitResult]:
        """Receipts for what this caller's turn produced the first time, counted once."""
        results = []
        for origin in turns.origins_of_turn(conn, turn.id):
            cand = candidates.get_candidate(conn, origin.candidate_id)
            if cand is None or origin.created_by != who.id:
                continue
            sent = Proposal(content=origin.content or "", kind=origin.kind or cand.kind,
                            namespace=origin.namespace or cand.namespace, source=origin.source,
                            confidence=origin.confidence, origin=None, created_by=who.id)
            results.append(SubmitResult(cand, Outcome.DUPLICATE, receipt(
                conn, cand, who, Outcome.DUPLICATE, sent, origin.created_at)))
        return results

    def _reserve_backlog(self) -> None:
        with self._backlog_lock:
            if self._backlog >= self._backlog_limit:
                raise ValidationError("the extraction backlog is full; try again later")
            self._backlog += 1

    def _release_backlog(self) -> None:
        with self._backlog_lock:
            self._backlog -= 1

    def _queue(self, extractor: Extractor, sub: TurnSubmission, context: ExtractionContext,
               turn_ref: str, who: Principal) -> None:
        """Run a slow extractor off the caller's path; its backlog slot is already held."""

        def run() -> None:
            status = "done"
            try:
                items = extractor.extract(sub.messages, context)
                self._take(items, sub, turn_ref, who)
            except Exception:
                status = "failed"
                log.exception("background extraction of turn %s failed", turn_ref)
            finally:
                self._release_backlog()
                with self._ctx.write() as tx:
                    turns.set_status(tx.conn, turn_ref, status)

        self._pool.submit(run)

    def _take(self, items: Sequence[ExtractedCandidate], sub: TurnSubmission, turn_ref: str,
              who: Principal) -> list[SubmitResult]:
        source = Source.COMPACTION if sub.trigger == "compaction" else Source.TURN
        results: list[SubmitResult] = []
        matcher = self._ctx.adapters.matcher
        if matcher is not None and len(items) > 1:
            try:  # one embedding batch for the turn, not one call per statement
                matcher.prepare([item.content for item in items])
            except Exception:  # an optimisation: find() embeds what is missing
                log.exception("embedding a turn's candidates ahead failed")
        for item in items:
            try:
                proposal = self._intake.proposal(CandidateInput(
                    content=item.content, kind=item.kind, namespace=item.namespace,
                    source=source, confidence=item.confidence,
                    origin=OriginInput(sub.conversation_id, sub.turn_id, item.excerpt, turn_ref),
                ), who)
            except MemvetError as exc:  # a ghost kind, a bad namespace, a foreign scope
                log.info("dropped an extracted candidate: %s", exc)
                continue
            with self._ctx.write() as tx:
                results.append(self._intake.take(tx, proposal, who))
        return results
