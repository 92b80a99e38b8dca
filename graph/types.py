"""GraphQL object types for the core's records: candidates, memories, origins, turns, audit.

Each wraps a record from memory/records.py (`of(record)`); fields that need another service
call (origins, transitions, the memory of a candidate...) are resolvers that make it in a
worker thread, so a client pays for them only when it selects them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from memvet.graph import fields
from memvet.graph.context import Context, call, run
from memvet.graph.enums import CandidateSource, CandidateStatus, MemoryKind, TransitionAction
from memvet.memory import records
from memvet.memory.access import Principal
from memvet.memory.errors import MemvetError
from memvet.memory.limits import MAX_RECALL_LIMIT

T = TypeVar("T")


async def _nested(info: Info[Context, Any], candidate: Candidate,
                  read: Callable[[Principal], T], *, empty: T) -> T:
    """A read behind one of a candidate's fields. On the reply to a write it never fails:
    the write is done, and an error here would turn the whole reply into null and hide that;
    a reply about a candidate the caller may not read gets the empty value."""
    reply = candidate._reply
    if reply == "hidden":
        return empty
    who = info.context.who
    if reply is None:
        return await call(read, who)
    try:
        return await run(read, who)
    except MemvetError:
        return empty


async def _origins(info: Info[Context, Any], candidate: Candidate) -> list[records.Origin]:
    """Origins of a candidate, fetched once even if `origin` and `origins` are both selected.

    Kept on the Candidate object (built per response), not in the context, which lives as
    long as a WebSocket connection and would serve stale origins to later events. On a reply
    about a candidate the caller may not read: only the caller's own observations."""
    if candidate._origins_loaded is not None:
        return candidate._origins_loaded
    c = info.context
    found: list[records.Origin]
    if candidate._reply == "hidden":
        found = await run(c.service.own_origins, str(candidate.id), c.who)
    else:
        found = await _nested(
            info, candidate, lambda who: c.service.origins(str(candidate.id), who), empty=[])
    candidate._origins_loaded = found
    return found


@strawberry.type(description="One message of a stored conversation turn.")
class Message:
    role: str = strawberry.field(description="user, assistant, system or tool.")
    content: str = strawberry.field(description="The message text.")


@strawberry.type(description="The exchange a candidate was extracted from (jump to the original "
                             "turn).")
class Turn:
    id: strawberry.ID = strawberry.field(description="The stored turn's id (Origin.turnRef).")
    conversation_id: str = strawberry.field(description="The agent's conversation id.")
    turn_id: str = strawberry.field(description="The agent's turn id within the conversation.")
    trigger: str = strawberry.field(description="`turn` or `compaction`.")
    workspace: str | None = strawberry.field(description="The workspace slug it came from.")
    persona: str | None = strawberry.field(description="The persona it came from.")
    messages: list[Message] = strawberry.field(description="The messages as submitted.")
    extractor: str | None = strawberry.field(description="The extractor that read it.")
    status: str = strawberry.field(description="Extraction status: queued, done or failed.")
    created_at: datetime = strawberry.field(description="When it was submitted.")

    @classmethod
    def of(cls, t: records.Turn) -> Turn:
        return cls(
            id=strawberry.ID(t.id), conversation_id=t.conversation_id, turn_id=t.turn_id,
            trigger=t.trigger, workspace=t.workspace, persona=t.persona,
            messages=[Message(role=m["role"], content=m["content"]) for m in t.messages],
            extractor=t.extractor, status=t.status, created_at=t.created_at,
        )


@strawberry.type(description="Where a candidate was observed; one per merged observation.")
class Origin:
    id: strawberry.ID = strawberry.field(description="The origin's id.")
    source: CandidateSource = strawberry.field(description="How this observation came in.")
    conversation_id: str | None = strawberry.field(description="The conversation it came from.")
    turn_id: str | None = strawberry.field(description="The agent's turn id.")
    turn_ref: strawberry.ID | None = strawberry.field(
        description="The stored turn's id, for `turn(id)`; null for explicit/manual input.")
    excerpt: str | None = strawberry.field(description="The passage it was extracted from.")
    confidence: float = strawberry.field(description="The confidence of this observation.")
    created_by: str | None = strawberry.field(description="The token id that submitted it.")
    created_at: datetime = strawberry.field(description="When it was observed.")

    @classmethod
    def of(cls, o: records.Origin) -> Origin:
        return cls(
            id=strawberry.ID(o.id), source=CandidateSource(o.source.value),
            conversation_id=o.conversation_id, turn_id=o.turn_id,
            turn_ref=strawberry.ID(o.turn_ref) if o.turn_ref else None, excerpt=o.excerpt,
            confidence=o.confidence, created_by=o.created_by, created_at=o.created_at,
        )

    @fields.field(description="The original turn, if this origin has one.")
    async def turn(self, info: Info[Context, Any]) -> Turn | None:
        if self.turn_ref is None:
            return None
        c = info.context
        return Turn.of(await call(c.service.turn, str(self.turn_ref), c.who))


@strawberry.type(description="One recorded transition: who did what, when, from what to what.")
class Transition:
    id: int = strawberry.field(description="Sequence number in the audit trail.")
    candidate_id: strawberry.ID = strawberry.field(description="The candidate it concerns.")
    memory_id: strawberry.ID | None = strawberry.field(
        description="The memory, if one is involved.")
    action: TransitionAction = strawberry.field(description="What happened.")
    from_status: CandidateStatus | None = strawberry.field(description="Status before.")
    to_status: CandidateStatus | None = strawberry.field(description="Status after.")
    actor: str = strawberry.field(
        description="Who: `role:name` of a token, or `policy:auto-approve`.")
    at: datetime = strawberry.field(description="When.")
    changes: JSON | None = strawberry.field(description="Edited fields: {field: [before, after]}.")
    reason: str | None = strawberry.field(description="The reviewer's reason, if given.")

    @classmethod
    def of(cls, t: records.Transition) -> Transition:
        return cls(
            id=t.id, candidate_id=strawberry.ID(t.candidate_id),
            memory_id=strawberry.ID(t.memory_id) if t.memory_id else None,
            action=TransitionAction(t.action.value),
            from_status=CandidateStatus(t.from_status.value) if t.from_status else None,
            to_status=CandidateStatus(t.to_status.value) if t.to_status else None,
            actor=t.actor, at=t.at,
            changes=JSON(t.changes) if t.changes is not None else None, reason=t.reason,
        )


@strawberry.type(description="An approved memory: what agents recall.")
class Memory:
    id: strawberry.ID = strawberry.field(description="The memory's id.")
    candidate_id: strawberry.ID = strawberry.field(
        description="The candidate it was approved from.")
    content: str = strawberry.field(description="The text agents recall.")
    kind: MemoryKind = strawberry.field(description="One of the six kinds.")
    namespace: str = strawberry.field(description="`persona:<name>` or `workspace:<name>`.")
    observations: int = strawberry.field(
        description="How often it was observed (keeps counting after approval).")
    approved_at: datetime = strawberry.field(description="When it was approved.")
    approved_by: str = strawberry.field(
        description="Who approved it: `role:name`, or `policy:auto-approve`.")
    updated_at: datetime = strawberry.field(description="When it last changed.")

    @classmethod
    def of(cls, m: records.Memory) -> Memory:
        return cls(
            id=strawberry.ID(m.id), candidate_id=strawberry.ID(m.candidate_id),
            content=m.content, kind=MemoryKind(m.kind.value), namespace=m.namespace,
            observations=m.observations, approved_at=m.approved_at, approved_by=m.approved_by,
            updated_at=m.updated_at,
        )

    @fields.field(description="The candidate it came from; null if the caller may not read "
                              "it (an agent reads only candidates it proposed).")
    async def candidate(self, info: Info[Context, Any]) -> Candidate | None:
        c = info.context
        try:
            return Candidate.of(await run(c.service.get_candidate, str(self.candidate_id), c.who))
        except MemvetError:
            return None

    @fields.field(description="The audit trail of its candidate, oldest first.")
    async def transitions(self, info: Info[Context, Any]) -> list[Transition]:
        c = info.context
        found = await call(c.service.transitions, str(self.candidate_id), c.who)
        return [Transition.of(t) for t in found]


@strawberry.type(description="One recall result with the parts of its score.")
class RecallHit:
    memory: Memory = strawberry.field(description="The recalled memory.")
    score: float = strawberry.field(description="The ranking score: fused × kindWeight.")
    dense: float | None = strawberry.field(
        description="Cosine similarity to the query; null if found only lexically.")
    lexical: float | None = strawberry.field(
        description="Lexical (BM25) score; null if found only semantically.")
    fused: float = strawberry.field(description="Dense and lexical evidence combined.")
    kind_weight: float = strawberry.field(
        description="The weight of the memory's kind (decision and postmortem weigh more).")

    @classmethod
    def of(cls, h: records.RecallHit) -> RecallHit:
        return cls(memory=Memory.of(h.memory), score=h.score, dense=h.dense, lexical=h.lexical,
                   fused=h.fused, kind_weight=h.kind_weight)


@strawberry.type(description="A proposed memory waiting for (or past) a human decision.")
class Candidate:
    id: strawberry.ID = strawberry.field(description="The candidate's id.")
    content: str = strawberry.field(description="The proposed memory text.")
    kind: MemoryKind = strawberry.field(description="One of the six kinds.")
    namespace: str = strawberry.field(description="`persona:<name>` or `workspace:<name>`.")
    source: CandidateSource = strawberry.field(description="How it was first proposed.")
    confidence: float = strawberry.field(
        description="The highest confidence among its observations (0–1).")
    observations: int = strawberry.field(
        description="How often it was observed (in a reply to a write: how often this caller "
                    "proposed it).")
    independent_observations: int = strawberry.field(
        description="In how many separate conversations it was observed (outside any "
                    "conversation, one per token): what the auto-approve policy counts.")
    status: CandidateStatus = strawberry.field(description="Where it is in the lifecycle.")
    created_by: str | None = strawberry.field(description="The token id that first proposed it.")
    created_at: datetime = strawberry.field(description="First observed.")
    last_observed_at: datetime = strawberry.field(description="Last observed.")
    touched_at: datetime = strawberry.field(
        description="Last observed or edited; the archive window counts from here.")
    reviewed_at: datetime | None = strawberry.field(description="When it was approved/rejected.")
    reviewed_by: str | None = strawberry.field(description="Who approved/rejected it.")
    review_reason: str | None = strawberry.field(description="The reason given, if any.")
    # Per-object state for the nested fields, not in the schema: on the reply to a write,
    # whether the caller may read the candidate (see _nested); its origins, once loaded.
    _reply: strawberry.Private[Literal["readable", "hidden"] | None] = None
    _origins_loaded: strawberry.Private[list[records.Origin] | None] = None

    @classmethod
    def of(cls, c: records.Candidate) -> Candidate:
        return cls(
            id=strawberry.ID(c.id), content=c.content, kind=MemoryKind(c.kind.value),
            namespace=c.namespace, source=CandidateSource(c.source.value),
            confidence=c.confidence, observations=c.observations,
            independent_observations=c.independent_observations,
            status=CandidateStatus(c.status.value), created_by=c.created_by,
            created_at=c.created_at, last_observed_at=c.last_observed_at,
            touched_at=c.touched_at, reviewed_at=c.reviewed_at, reviewed_by=c.reviewed_by,
            review_reason=c.review_reason,
        )

    @classmethod
    def of_receipt(cls, r: records.Receipt) -> Candidate:
        """A write's reply: what the caller sent, the outcome's status, nothing others wrote."""
        cand = cls(
            id=strawberry.ID(r.candidate_id), content=r.content, kind=MemoryKind(r.kind.value),
            namespace=r.namespace, source=CandidateSource(r.source.value),
            confidence=r.confidence, observations=r.observations,
            independent_observations=r.independent_observations,
            status=CandidateStatus(r.status.value), created_by=r.created_by,
            created_at=r.observed_at, last_observed_at=r.observed_at, touched_at=r.observed_at,
            reviewed_at=None, reviewed_by=None, review_reason=None,
        )
        # A per-object mark read by the nested fields (see _nested).
        cand._reply = "readable" if r.readable else "hidden"
        return cand

    @fields.field(description="Where it was first observed (its oldest origin).")
    async def origin(self, info: Info[Context, Any]) -> Origin | None:
        found = await _origins(info, self)
        return Origin.of(found[0]) if found else None

    @fields.field(description="Every observation merged into it, oldest first.")
    async def origins(self, info: Info[Context, Any]) -> list[Origin]:
        return [Origin.of(o) for o in await _origins(info, self)]

    @fields.field(description="Its audit trail, oldest first.")
    async def transitions(self, info: Info[Context, Any]) -> list[Transition]:
        service = info.context.service
        found: list[records.Transition] = await _nested(
            info, self, lambda who: service.transitions(str(self.id), who), empty=[])
        return [Transition.of(t) for t in found]

    @fields.field(description="The memory it became, if approved (and not deleted).")
    async def memory(self, info: Info[Context, Any]) -> Memory | None:
        service = info.context.service
        found = await _nested(info, self, lambda who: service.memory_of(str(self.id), who),
                              empty=None)
        return Memory.of(found) if found is not None else None

    @fields.field(description="The closest approved memories in its namespace: check for "
                              "duplicates and contradictions before approving.")
    async def related(
        self, info: Info[Context, Any],
        limit: Annotated[int, strawberry.argument(
            description=f"How many (1-{MAX_RECALL_LIMIT}).")] = 5,
    ) -> list[RecallHit]:
        service = info.context.service
        found: list[records.RecallHit] = await _nested(
            info, self, lambda who: service.related(str(self.id), who, limit), empty=[])
        return [RecallHit.of(h) for h in found]
