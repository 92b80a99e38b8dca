"""GraphQL enums. They mirror the core's enums name for name and value for value (a test keeps
them in step), so `.core()` converts by name: mypy types `.value` as the `enum_value(...)`
definition, which `strawberry.enum` replaces with the plain value only at runtime."""

from __future__ import annotations

from enum import Enum

import strawberry

from memvet.memory.access import Role
from memvet.memory.kinds import Kind
from memvet.memory.records import Action, Outcome, Source, Status


@strawberry.enum(description="What a memory is about: exactly six kinds, there is no seventh.")
class MemoryKind(Enum):
    PREFERENCE = strawberry.enum_value(
        "preference", description="A confirmed user preference about how agents should work.")
    FACT = strawberry.enum_value(
        "fact", description="A durable, checkable fact about the project.")
    DECISION = strawberry.enum_value(
        "decision", description="A choice that was made, ideally with its reason.")
    PATTERN = strawberry.enum_value(
        "pattern", description="A recurring behaviour or convention worth encoding once.")
    POSTMORTEM = strawberry.enum_value(
        "postmortem", description="What went wrong and what to do differently.")
    EVENT = strawberry.enum_value(
        "event", description="Something that happened, worth remembering that it happened.")

    def core(self) -> Kind:
        return Kind[self.name]


@strawberry.enum(description="Where a candidate is in the review lifecycle.")
class CandidateStatus(Enum):
    PENDING = strawberry.enum_value("pending", description="Waiting for a reviewer.")
    APPROVED = strawberry.enum_value("approved", description="Approved: it is now a Memory.")
    REJECTED = strawberry.enum_value(
        "rejected", description="Rejected: equivalent candidates are counted here, not re-queued.")
    ARCHIVED = strawberry.enum_value(
        "archived", description="Untouched past the archive window; revived if observed again.")

    def core(self) -> Status:
        return Status[self.name]


@strawberry.enum(description="How a candidate was born.")
class CandidateSource(Enum):
    EXPLICIT = strawberry.enum_value("explicit", description="An agent called remember.")
    TURN = strawberry.enum_value("turn", description="Extracted from a conversation turn.")
    COMPACTION = strawberry.enum_value(
        "compaction", description="Extracted from messages about to be compacted.")
    MANUAL = strawberry.enum_value("manual", description="Typed in by a person.")

    def core(self) -> Source:
        return Source[self.name]


@strawberry.enum(description="What a recorded transition did.")
class TransitionAction(Enum):
    CREATED = strawberry.enum_value("created", description="The candidate was created.")
    MERGED = strawberry.enum_value(
        "merged", description="An equivalent observation merged into the pending candidate.")
    REINFORCED = strawberry.enum_value(
        "reinforced", description="An observation counted on an approved or rejected candidate.")
    REVIVED = strawberry.enum_value(
        "revived", description="An archived candidate was observed again and is pending again.")
    APPROVED = strawberry.enum_value("approved", description="Approved and promoted to memory.")
    REJECTED = strawberry.enum_value("rejected", description="Rejected by a reviewer.")
    ARCHIVED = strawberry.enum_value("archived", description="Archived as stale.")
    EDITED = strawberry.enum_value("edited", description="Edited in the queue.")
    MEMORY_UPDATED = strawberry.enum_value(
        "memory_updated", description="The approved memory was edited.")
    MEMORY_DELETED = strawberry.enum_value(
        "memory_deleted", description="The approved memory was deleted.")


@strawberry.enum(description="What a review event reports.")
class ReviewAction(Enum):
    CREATED = strawberry.enum_value("created", description="A new pending candidate.")
    MERGED = strawberry.enum_value(
        "merged", description="An observation merged into an existing candidate or memory.")
    APPROVED = strawberry.enum_value("approved", description="A candidate became a memory.")
    REJECTED = strawberry.enum_value("rejected", description="A candidate was rejected.")
    ARCHIVED = strawberry.enum_value("archived", description="A candidate was archived.")
    EDITED = strawberry.enum_value("edited", description="A pending candidate was edited.")
    MEMORY_UPDATED = strawberry.enum_value(
        "memory_updated", description="An approved memory was edited.")
    MEMORY_DELETED = strawberry.enum_value(
        "memory_deleted", description="An approved memory was deleted.")
    POLICY_CHANGED = strawberry.enum_value(
        "policy_changed", description="The auto-approve policy changed.")


@strawberry.enum(description="What happened to one submitted candidate.")
class SubmitOutcome(Enum):
    CREATED = strawberry.enum_value("created", description="A new pending candidate.")
    MERGED = strawberry.enum_value(
        "merged", description="Merged into an equivalent pending candidate.")
    REINFORCED = strawberry.enum_value(
        "reinforced", description="Counted on an approved memory or a rejected candidate.")
    REVIVED = strawberry.enum_value(
        "revived", description="An archived equivalent is pending again.")
    DUPLICATE = strawberry.enum_value(
        "duplicate", description="The same turn was submitted before; counted once.")


@strawberry.enum(description="A token's role.")
class TokenRole(Enum):
    AGENT = strawberry.enum_value(
        "agent", description="Remember, submit turns, recall, read its own candidates.")
    REVIEWER = strawberry.enum_value(
        "reviewer", description="Everything in review: approve, reject, edit, delete, archive.")
    ADMIN = strawberry.enum_value("admin", description="Also tokens, policy and persona.")

    def core(self) -> Role:
        return Role[self.name]


@strawberry.enum(description="How to order the candidate queue.")
class CandidateOrder(Enum):
    NEWEST = strawberry.enum_value("newest", description="Newest first (the default).")
    OLDEST = strawberry.enum_value("oldest", description="Oldest first.")
    OBSERVATIONS = strawberry.enum_value("observations", description="Most observed first.")
    CONFIDENCE = strawberry.enum_value("confidence", description="Most confident first.")
    LAST_OBSERVED = strawberry.enum_value(
        "last_observed", description="Most recently observed first.")


MIRRORS: list[tuple[type[Enum], type[Enum]]] = [
    (MemoryKind, Kind), (CandidateStatus, Status), (CandidateSource, Source),
    (TransitionAction, Action), (SubmitOutcome, Outcome), (TokenRole, Role),
]
