"""The plain dataclasses the core hands out: candidates, memories, origins, turns, transitions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from memvet.memory.kinds import Kind
from memvet.memory.ports import Message


class Status(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    ARCHIVED = "archived"


class Source(StrEnum):
    EXPLICIT = "explicit"
    TURN = "turn"
    COMPACTION = "compaction"
    MANUAL = "manual"


class Action(StrEnum):
    """What a transition did; one review event is published per transition."""

    CREATED = "created"
    MERGED = "merged"
    REINFORCED = "reinforced"  # an observation counted on an approved/rejected candidate
    REVIVED = "revived"  # an archived candidate observed again goes back to pending
    APPROVED = "approved"
    REJECTED = "rejected"
    ARCHIVED = "archived"
    EDITED = "edited"
    MEMORY_UPDATED = "memory_updated"
    MEMORY_DELETED = "memory_deleted"


@dataclass(frozen=True)
class Origin:
    id: str
    candidate_id: str
    source: Source
    conversation_id: str | None
    turn_id: str | None
    turn_ref: str | None
    excerpt: str | None
    confidence: float
    created_by: str | None
    created_at: datetime
    content: str | None = None  # what this observation proposed (None before 0002)
    kind: Kind | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class Candidate:
    id: str
    content: str
    kind: Kind
    namespace: str
    source: Source
    confidence: float
    observations: int
    independent_observations: int  # distinct conversations (+1 per token outside any)
    status: Status
    created_by: str | None
    created_at: datetime
    last_observed_at: datetime
    touched_at: datetime
    reviewed_at: datetime | None
    reviewed_by: str | None
    review_reason: str | None


@dataclass(frozen=True)
class Memory:
    id: str
    candidate_id: str
    content: str
    kind: Kind
    namespace: str
    observations: int
    approved_at: datetime
    approved_by: str
    updated_at: datetime


@dataclass(frozen=True)
class Transition:
    id: int
    candidate_id: str
    memory_id: str | None
    action: Action
    from_status: Status | None
    to_status: Status | None
    actor: str
    at: datetime
    changes: dict[str, Any] | None
    reason: str | None


@dataclass(frozen=True)
class Turn:
    id: str
    conversation_id: str
    turn_id: str
    trigger: str
    workspace: str | None
    persona: str | None
    messages: list[dict[str, str]]
    extractor: str | None
    status: str
    created_by: str | None
    created_at: datetime


@dataclass(frozen=True)
class CandidateEdit:
    """A reviewer's correction; None fields stay as they are."""

    content: str | None = None
    kind: str | Kind | None = None
    namespace: str | None = None

    def is_empty(self) -> bool:
        return self.content is None and self.kind is None and self.namespace is None


@dataclass(frozen=True)
class OriginInput:
    """Where a candidate was seen: enough to jump back to the original turn."""

    conversation_id: str | None = None
    turn_id: str | None = None
    excerpt: str | None = None
    turn_ref: str | None = None


@dataclass(frozen=True)
class CandidateInput:
    content: str
    kind: str | Kind
    namespace: str | None = None
    source: Source = Source.EXPLICIT
    confidence: float = 1.0
    origin: OriginInput | None = None


class Outcome(StrEnum):
    CREATED = "created"
    MERGED = "merged"  # into a pending candidate
    REINFORCED = "reinforced"  # counted on an approved (memory) or rejected candidate
    REVIVED = "revived"
    DUPLICATE = "duplicate"  # the same turn again: counted once already


@dataclass(frozen=True)
class Receipt:
    """What a write path answers its caller: what the caller itself sent, the outcome and the
    status, never what a reviewer or another caller wrote on the candidate.

    `observations` and `independent_observations` count this caller's own observations;
    `readable` says whether the caller may read the candidate itself (a reviewer in its
    namespace, or the agent that first proposed it)."""

    candidate_id: str
    outcome: Outcome
    status: Status
    content: str
    kind: Kind
    namespace: str
    source: Source
    confidence: float
    observations: int
    independent_observations: int
    observed_at: datetime
    created_by: str | None
    readable: bool
    auto_approved: bool = False


@dataclass(frozen=True)
class SubmitResult:
    """`receipt` is what every door hands its caller. `candidate` is the row as it now
    stands, for trusted in-process callers (the operator's CLI, tests)."""

    candidate: Candidate
    outcome: Outcome
    receipt: Receipt
    auto_approved: bool = False


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    total: int
    offset: int
    has_next: bool


@dataclass(frozen=True)
class QueueStats:
    pending: int
    approved: int
    rejected: int
    archived: int
    memories: int
    pending_by_namespace: dict[str, int] = field(default_factory=dict)
    extraction_backlog: int = 0


@dataclass(frozen=True)
class RecallHit:
    memory: Memory
    score: float
    dense: float | None
    lexical: float | None
    fused: float
    kind_weight: float


def candidate_from_row(row: Mapping[Any, Any]) -> Candidate:
    return Candidate(
        id=row["id"],
        content=row["content"],
        kind=Kind(row["kind"]),
        namespace=row["namespace"],
        source=Source(row["source"]),
        confidence=float(row["confidence"]),
        observations=int(row["observations"]),
        independent_observations=int(row["independent_observations"]),
        status=Status(row["status"]),
        created_by=row["created_by"],
        created_at=row["created_at"],
        last_observed_at=row["last_observed_at"],
        touched_at=row["touched_at"],
        reviewed_at=row["reviewed_at"],
        reviewed_by=row["reviewed_by"],
        review_reason=row["review_reason"],
    )


def memory_from_row(row: Mapping[Any, Any]) -> Memory:
    return Memory(
        id=row["id"],
        candidate_id=row["candidate_id"],
        content=row["content"],
        kind=Kind(row["kind"]),
        namespace=row["namespace"],
        observations=int(row["observations"]),
        approved_at=row["approved_at"],
        approved_by=row["approved_by"],
        updated_at=row["updated_at"],
    )


def origin_from_row(row: Mapping[Any, Any]) -> Origin:
    return Origin(
        id=row["id"],
        candidate_id=row["candidate_id"],
        source=Source(row["source"]),
        conversation_id=row["conversation_id"],
        turn_id=row["turn_id"],
        turn_ref=row["turn_ref"],
        excerpt=row["excerpt"],
        confidence=float(row["confidence"]),
        created_by=row["created_by"],
        created_at=row["created_at"],
        content=row.get("content"),
        kind=Kind(row["kind"]) if row.get("kind") else None,
        namespace=row.get("namespace"),
    )


def transition_from_row(row: Mapping[Any, Any]) -> Transition:
    return Transition(
        id=int(row["id"]),
        candidate_id=row["candidate_id"],
        memory_id=row["memory_id"],
        action=Action(row["action"]),
        from_status=Status(row["from_status"]) if row["from_status"] else None,
        to_status=Status(row["to_status"]) if row["to_status"] else None,
        actor=row["actor"],
        at=row["at"],
        changes=row["changes"],
        reason=row["reason"],
    )


def turn_from_row(row: Mapping[Any, Any]) -> Turn:
    return Turn(
        id=row["id"],
        conversation_id=row["conversation_id"],
        turn_id=row["turn_id"],
        trigger=row["trigger"],
        workspace=row["workspace"],
        persona=row["persona"],
        messages=list(row["messages"]),
        extractor=row["extractor"],
        status=row["status"],
        created_by=row["created_by"],
        created_at=row["created_at"],
    )


TRIGGERS = ("turn", "compaction")


@dataclass(frozen=True)
class TurnSubmission:
    """The last exchange (trigger 'turn') or the stretch about to be compacted."""

    conversation_id: str
    turn_id: str
    messages: Sequence[Message]
    workspace: str | None = None
    persona: str | None = None
    trigger: str = "turn"


@dataclass(frozen=True)
class TurnResult:
    """A stored turn and what its extraction produced (empty while `queued`)."""

    turn: Turn
    results: list[SubmitResult]
    queued: bool
    duplicate: bool
