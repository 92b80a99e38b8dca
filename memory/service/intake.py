"""Intake: a proposal from any source enters the queue, or counts on its equivalent.

Equivalence is first the normalised text (same namespace and kind), then, with a matcher, the
semantic similarity above a threshold. The same conversation turn counts once. A candidate the
policy qualifies is promoted on the spot. The caller's answer is a receipt built from what it
sent (records.Receipt), never from the row as it now stands.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Connection

from memvet.memory.access import Permission, Principal
from memvet.memory.kinds import parse_kind
from memvet.memory.namespaces import resolve_namespace
from memvet.memory.policy import POLICY_ACTOR
from memvet.memory.proposals import (
    Proposal,
    clean_confidence,
    clean_content,
    clean_origin,
    content_key,
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
from memvet.memory.service.context import ServiceContext, Tx
from memvet.memory.store import candidates, engine, observations, review


class Intake:
    """submit, and the intake step the extraction passes share."""

    def __init__(self, ctx: ServiceContext) -> None:
        self._ctx = ctx

    def submit(self, item: CandidateInput, who: Principal) -> SubmitResult:
        """Propose a candidate (any source). Merges with its equivalent if there is one."""
        who.require(Permission.REVIEW if item.source is Source.MANUAL else Permission.SUBMIT)
        proposal = self.proposal(item, who)
        with self._ctx.write() as tx:
            return self.take(tx, proposal, who)

    def proposal(self, item: CandidateInput, who: Principal) -> Proposal:
        """Validate a proposal: its kind, its namespace (the caller's to use), its text."""
        kind = parse_kind(item.kind)
        # The active persona costs a settings read: only when the namespace is left out.
        persona = "" if item.namespace and str(item.namespace).strip() else (
            self._ctx.settings.active_persona())
        namespace = resolve_namespace(item.namespace, persona)
        who.require_namespace(namespace)
        return Proposal(
            content=clean_content(item.content),
            kind=kind,
            namespace=namespace,
            source=Source(item.source),
            confidence=clean_confidence(item.confidence),
            origin=clean_origin(item.origin),
            created_by=who.id,
        )

    def take(self, tx: Tx, p: Proposal, who: Principal) -> SubmitResult:
        """Insert `p`, or count it on its equivalent; then let the policy have its say."""
        ctx, conn, now = self._ctx, tx.conn, self._ctx.clock()
        key = content_key(p.content)
        engine.lock_key(conn, f"{p.namespace}|{p.kind.value}|{key}")
        existing = observations.find_exact(conn, p.namespace, p.kind, key)
        matcher = ctx.adapters.matcher
        if existing is None and matcher is not None:
            match = matcher.find(p.namespace, p.kind, p.content,
                                 threshold=ctx.equivalence_threshold)
            if match is not None:
                row = observations.load_for_update(conn, match.candidate_id)
                if row and row["namespace"] == p.namespace and row["kind"] == p.kind.value:
                    existing = row
        if existing is None:
            cand = observations.insert_candidate(conn, p, who.actor, now)
            tx.matcher_add.append(cand)
            ctx.event(tx, "created", cand.namespace, who.actor, candidate_id=cand.id)
            outcome = Outcome.CREATED
        elif observations.seen_turn(conn, existing["id"], p.origin):
            cand = candidate_from_row(existing)
            return SubmitResult(cand, Outcome.DUPLICATE,
                                receipt(conn, cand, who, Outcome.DUPLICATE, p, now))
        else:
            cand, outcome, memory_id = observations.observe(conn, existing, p, who.actor, now)
            if outcome is Outcome.REVIVED:
                tx.matcher_add.append(cand)
            ctx.event(tx, "merged", cand.namespace, who.actor, candidate_id=cand.id,
                      memory_id=memory_id, outcome=outcome.value)
        auto = cand.status is Status.PENDING and ctx.settings.policy(conn).qualifies(
            cand.kind, cand.namespace, cand.independent_observations, cand.confidence)
        if auto:
            row = observations.load_for_update(conn, cand.id)
            assert row is not None
            memory = review.approve(conn, row, None, actor=POLICY_ACTOR, now=now,
                                    check_namespace=lambda ns: None)
            tx.touched_index = True
            ctx.event(tx, "approved", memory.namespace, POLICY_ACTOR,
                      candidate_id=cand.id, memory_id=memory.id)
            cand = candidates.get_candidate(conn, cand.id) or cand
        return SubmitResult(cand, outcome, receipt(conn, cand, who, outcome, p, now, auto), auto)


def receipt(conn: Connection, cand: Candidate, who: Principal, outcome: Outcome,
            sent: Proposal, observed_at: datetime,
            auto_approved: bool = False) -> Receipt:
    """The caller's answer: what it sent, the outcome and the status, and nothing a reviewer
    or another caller wrote."""
    mine, mine_independent = observations.own_counts(conn, cand.id, who.id)
    return Receipt(
        candidate_id=cand.id, outcome=outcome, status=cand.status, content=sent.content,
        kind=sent.kind, namespace=sent.namespace, source=sent.source, confidence=sent.confidence,
        observations=mine, independent_observations=mine_independent, observed_at=observed_at,
        created_by=who.id if cand.created_by == who.id else None,
        readable=who.may_read(cand.namespace, cand.created_by), auto_approved=auto_approved)

