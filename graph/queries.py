"""Query root types: the queue, memories, recall, settings. Each resolver is one service call.

Failures are GraphQL errors with `extensions.code` (NOT_FOUND, FORBIDDEN, VALIDATION...).
"""

from __future__ import annotations

from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from memvet.graph import fields
from memvet.graph.admin_types import ApiToken, AutoApprovePolicy, QueueStats, Viewer
from memvet.graph.context import Context, call
from memvet.graph.enums import CandidateOrder, CandidateSource, CandidateStatus, MemoryKind
from memvet.graph.errors import graphql_error
from memvet.graph.pagination import MAX_FIRST, Connection, connection, window
from memvet.graph.permissions import IsAdmin
from memvet.graph.types import Candidate, Memory, RecallHit, Transition, Turn
from memvet.memory.errors import MemvetError
from memvet.memory.limits import MAX_RECALL_LIMIT

FirstArg = Annotated[int, strawberry.argument(description=f"Page size (1–{MAX_FIRST}).")]
AfterArg = Annotated[str | None, strawberry.argument(
    description="Return items after this cursor (a previous page's `endCursor`).")]
NamespaceArg = Annotated[str | None, strawberry.argument(
    description="Only this namespace (`persona:<name>` or `workspace:<name>`).")]
KindArg = Annotated[MemoryKind | None, strawberry.argument(description="Only this kind.")]
IdArg = Annotated[strawberry.ID, strawberry.argument(description="The id.")]


def _window(first: int, after: str | None) -> tuple[int, int]:
    try:
        return window(first, after)
    except MemvetError as exc:
        raise graphql_error(exc) from exc


@strawberry.type(description="Approved memories of one namespace.")
class MemoryGroup:
    namespace: str = strawberry.field(description="The namespace.")
    count: int = strawberry.field(description="How many memories are listed here.")
    memories: list[Memory] = strawberry.field(description="Its memories, newest first.")


@strawberry.type
class ReviewQuery:
    @fields.field(description="Who the caller is: token name, role and namespace scope.")
    def viewer(self, info: Info[Context, Any]) -> Viewer:
        return Viewer.of(info.context.who)

    @fields.field(description="The candidate queue, filtered. Agents see only candidates "
                              "they proposed; scoped tokens only their namespaces.")
    async def candidates(
        self, info: Info[Context, Any],
        status: Annotated[CandidateStatus | None, strawberry.argument(
            description="Only this status (all statuses when omitted).")] = None,
        namespace: NamespaceArg = None,
        kind: KindArg = None,
        source: Annotated[CandidateSource | None, strawberry.argument(
            description="Only this source.")] = None,
        order: Annotated[CandidateOrder, strawberry.argument(
            description="Sort order.")] = CandidateOrder.NEWEST,
        first: FirstArg = 50,
        after: AfterArg = None,
    ) -> Connection[Candidate]:
        c = info.context
        offset, limit = _window(first, after)
        page = await call(
            c.service.list_candidates, c.who,
            statuses=[status.core()] if status else None,
            namespaces=[namespace] if namespace is not None else None,
            kinds=[kind.core()] if kind else None,
            sources=[source.core()] if source else None,
            order=order.value, offset=offset, limit=limit)
        return connection(page, Candidate.of)

    @fields.field(description="One candidate (NOT_FOUND if it doesn't exist or the caller "
                              "may not see it).")
    async def candidate(self, info: Info[Context, Any], id: IdArg) -> Candidate | None:
        c = info.context
        return Candidate.of(await call(c.service.get_candidate, str(id), c.who))

    @fields.field(description="The audit trail of a candidate, oldest first.")
    async def transitions(
        self, info: Info[Context, Any],
        candidate_id: Annotated[strawberry.ID, strawberry.argument(
            description="The candidate.")],
    ) -> list[Transition]:
        c = info.context
        return [Transition.of(t)
                for t in await call(c.service.transitions, str(candidate_id), c.who)]

    @fields.field(description="The original turn behind a candidate (Origin.turnRef).")
    async def turn(self, info: Info[Context, Any], id: IdArg) -> Turn | None:
        c = info.context
        return Turn.of(await call(c.service.turn, str(id), c.who))

    @fields.field(description="One approved memory (reviewers).")
    async def memory(self, info: Info[Context, Any], id: IdArg) -> Memory | None:
        c = info.context
        return Memory.of(await call(c.service.get_memory, str(id), c.who))

    @fields.field(description="Approved memories, newest first (reviewers).")
    async def memories(
        self, info: Info[Context, Any], namespace: NamespaceArg = None, kind: KindArg = None,
        first: FirstArg = 50, after: AfterArg = None,
    ) -> Connection[Memory]:
        c = info.context
        offset, limit = _window(first, after)
        page = await call(
            c.service.list_memories, c.who,
            namespaces=[namespace] if namespace is not None else None,
            kinds=[kind.core()] if kind else None, offset=offset, limit=limit)
        return connection(page, Memory.of)

    @fields.field(description="Approved memories grouped by namespace (the dashboard's "
                              "approved view; up to 200 per namespace).")
    async def memory_groups(self, info: Info[Context, Any]) -> list[MemoryGroup]:
        c = info.context
        groups = await call(c.service.memory_groups, c.who)
        return [MemoryGroup(namespace=ns, count=len(items),
                            memories=[Memory.of(m) for m in items])
                for ns, items in sorted(groups.items())]

    @fields.field(description="Counts of the queue by status and pending per namespace.")
    async def queue_stats(self, info: Info[Context, Any]) -> QueueStats:
        c = info.context
        return QueueStats.of(await call(c.service.queue_stats, c.who))

    @fields.field(description="Namespaces that hold candidates or memories the caller sees.")
    async def namespaces(self, info: Info[Context, Any]) -> list[str]:
        c = info.context
        return await call(c.service.namespaces, c.who)


@strawberry.type
class RecallQuery:
    @fields.field(description="Semantic + lexical search over approved memories the caller "
                              "may read. Nothing pending, rejected or archived is ever "
                              "returned.")
    async def recall(
        self, info: Info[Context, Any],
        query: Annotated[str, strawberry.argument(description="What to look for.")],
        namespace: NamespaceArg = None,
        namespaces: Annotated[list[str] | None, strawberry.argument(
            description="Only these namespaces (combined with `namespace`).")] = None,
        kinds: Annotated[list[MemoryKind] | None, strawberry.argument(
            description="Only these kinds.")] = None,
        limit: Annotated[int, strawberry.argument(
            description=f"How many results (1–{MAX_RECALL_LIMIT}).")] = 10,
    ) -> list[RecallHit]:
        c = info.context
        wanted = [*([namespace] if namespace is not None else []), *(namespaces or [])]
        hits = await call(
            c.service.recall, query, c.who, namespaces=wanted or None,
            kinds=[k.core() for k in kinds] if kinds else None, limit=limit)
        return [RecallHit.of(h) for h in hits]

    @fields.field(description="What an agent should know at session start: the approved "
                              "memories of `workspace:<workspace>` and `persona:<persona>` "
                              "(the active persona when omitted), decisions and "
                              "postmortems first, then the most observed, then the newest. "
                              "Namespaces the token may not read are left out.")
    async def briefing(
        self, info: Info[Context, Any],
        workspace: Annotated[str | None, strawberry.argument(
            description="The workspace name (without the `workspace:` prefix).")] = None,
        persona: Annotated[str | None, strawberry.argument(
            description="The persona name; defaults to the active persona.")] = None,
        limit: Annotated[int, strawberry.argument(
            description=f"How many memories (1–{MAX_FIRST}).")] = 100,
    ) -> list[Memory]:
        c = info.context
        found = await call(c.service.briefing, c.who, workspace=workspace, persona=persona,
                           limit=limit)
        return [Memory.of(m) for m in found]

    @fields.field(description="The approved memories closest to a candidate, in its "
                              "namespace (check before approving).")
    async def related(
        self, info: Info[Context, Any],
        candidate_id: Annotated[strawberry.ID, strawberry.argument(
            description="The candidate.")],
        limit: Annotated[int, strawberry.argument(
            description=f"How many (1–{MAX_RECALL_LIMIT}).")] = 5,
    ) -> list[RecallHit]:
        c = info.context
        hits = await call(c.service.related, str(candidate_id), c.who, limit)
        return [RecallHit.of(h) for h in hits]


@strawberry.type
class SettingsQuery:
    @fields.field(description="The auto-approve policy (reviewers read it, admins set it).")
    async def policy(self, info: Info[Context, Any]) -> AutoApprovePolicy:
        c = info.context
        return AutoApprovePolicy.of(await call(c.service.policy, c.who))

    @fields.field(description="The active persona: memories with no namespace go to "
                              "`persona:<activePersona>`.")
    async def active_persona(self, info: Info[Context, Any]) -> str:
        c = info.context
        return await call(c.service.active_persona, c.who)

    @fields.field(description="Days a pending candidate may stay untouched before it is "
                              "archived.")
    async def archive_days(self, info: Info[Context, Any]) -> int:
        c = info.context
        return await call(c.service.archive_days, c.who)

    @fields.field(description="Every API token (admins; never their secrets).",
                  permission_classes=[IsAdmin])
    async def tokens(self, info: Info[Context, Any]) -> list[ApiToken]:
        c = info.context
        return [ApiToken.of(t) for t in await call(c.service.list_tokens, c.who)]


__all__ = ["RecallQuery", "ReviewQuery", "SettingsQuery"]
