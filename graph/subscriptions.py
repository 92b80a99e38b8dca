"""Subscription root: review events for reviewers, live from the event bus.

The core's feed (memory/feed.py) decides what a subscriber sees and ends it when its token is
revoked; this door only maps events to GraphQL. The candidate or memory an event carries is
loaded fresh, with the subscriber's own rights, when the client selects it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from memvet.graph import fields
from memvet.graph.context import Context, run
from memvet.graph.enums import MemoryKind, ReviewAction
from memvet.graph.errors import graphql_error
from memvet.graph.permissions import CanReview
from memvet.graph.types import Candidate, Memory
from memvet.memory.errors import MemvetError
from memvet.memory.ports import ReviewEvent as CoreEvent


@strawberry.type(description="A deleted memory as it was (it can no longer be loaded).")
class MemorySnapshot:
    id: strawberry.ID = strawberry.field(description="The deleted memory's id.")
    namespace: str = strawberry.field(description="Its namespace.")
    content: str | None = strawberry.field(description="Its text.")
    kind: MemoryKind | None = strawberry.field(description="Its kind.")
    superseded_by: strawberry.ID | None = strawberry.field(
        description="The memory that replaced it, when it was superseded on approval.")


@strawberry.type(description="One review transition, delivered as it happens.")
class ReviewEvent:
    action: ReviewAction = strawberry.field(description="What happened.")
    namespace: str = strawberry.field(
        description="Where it happened (empty for policy changes, which only unscoped tokens "
                    "see).")
    actor: str = strawberry.field(description="Who did it: `role:name` or `policy:auto-approve`.")
    at: datetime = strawberry.field(description="When.")
    candidate_id: strawberry.ID | None = strawberry.field(description="The candidate concerned.")
    memory_id: strawberry.ID | None = strawberry.field(description="The memory concerned.")
    outcome: str | None = strawberry.field(
        description="For `merged`: merged, reinforced or revived.")
    deleted_memory: MemorySnapshot | None = strawberry.field(
        description="For `memory_deleted`: the memory as it was.")

    @classmethod
    def of(cls, e: CoreEvent) -> ReviewEvent:
        extra = e.extra or {}
        snapshot = None
        if e.action == "memory_deleted" and e.memory_id:
            kind = extra.get("kind")
            superseded = extra.get("superseded_by")
            snapshot = MemorySnapshot(
                id=strawberry.ID(e.memory_id), namespace=e.namespace,
                content=str(extra["content"]) if "content" in extra else None,
                kind=MemoryKind(kind) if kind in {k.value for k in MemoryKind} else None,
                superseded_by=strawberry.ID(str(superseded)) if superseded else None)
        outcome = extra.get("outcome")
        return cls(
            action=ReviewAction(e.action), namespace=e.namespace, actor=e.actor,
            at=datetime.fromisoformat(e.at),
            candidate_id=strawberry.ID(e.candidate_id) if e.candidate_id else None,
            memory_id=strawberry.ID(e.memory_id) if e.memory_id else None,
            outcome=str(outcome) if outcome else None, deleted_memory=snapshot)

    @fields.field(description="The candidate as it is now (null if it is gone).")
    async def candidate(self, info: Info[Context, Any]) -> Candidate | None:
        if self.candidate_id is None:
            return None
        c = info.context
        try:
            return Candidate.of(await run(c.service.get_candidate, str(self.candidate_id), c.who))
        except MemvetError:
            return None

    @fields.field(description="The memory as it is now (null if deleted: see "
                              "deletedMemory).")
    async def memory(self, info: Info[Context, Any]) -> Memory | None:
        if self.memory_id is None or self.action is ReviewAction.MEMORY_DELETED:
            return None
        c = info.context
        try:
            return Memory.of(await run(c.service.get_memory, str(self.memory_id), c.who))
        except MemvetError:
            return None


@strawberry.type
class ReviewSubscription:
    @fields.subscription(
        description="Review events (created, merged, approved, rejected, archived, edited, "
                    "memory updated/deleted, policy changed) in the namespaces this token sees; "
                    "reviewers and admins. A revoked token's subscription ends at once with "
                    "UNAUTHENTICATED.",
        permission_classes=[CanReview])
    async def review_events(
        self, info: Info[Context, Any],
        namespace: Annotated[str | None, strawberry.argument(
            description="Only this namespace.")] = None,
    ) -> AsyncGenerator[ReviewEvent, None]:
        c = info.context
        try:
            async for event in c.service.review_events(c.who, namespace=namespace):
                yield ReviewEvent.of(event)
        except MemvetError as exc:
            raise graphql_error(exc) from exc
