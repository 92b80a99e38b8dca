"""Mutation root types. Results are unions: the success type or a `UserError` member.

Clients select `__typename` and `... on UserError { code message }`; nothing expected is ever
a top-level error. The service checks role and namespace scope, so an agent token that tries
to approve gets a ForbiddenError here, whatever client it uses.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

import strawberry
from strawberry.types import Info

from memvet.graph import fields
from memvet.graph.admin_types import (
    ApiToken,
    AutoApprovePolicy,
    AutoApprovePolicyInput,
    CreatedToken,
)
from memvet.graph.context import Context, attempt, call, mapped, outcome
from memvet.graph.enums import MemoryKind, TokenRole
from memvet.graph.errors import AnyUserError
from memvet.graph.inputs import (
    ActivePersona,
    ArchiveResult,
    ArchiveWindow,
    CandidateEditInput,
    TurnInput,
    TurnResult,
    edit_or_none,
)
from memvet.graph.types import Candidate, Memory
from memvet.memory.access import Principal
from memvet.memory.limits import MAX_BULK
from memvet.memory.policy import AutoApprovePolicy as CorePolicy
from memvet.memory.records import CandidateInput, Receipt, Source
from memvet.memory.service import MemoryService

# `Success | every error type`, each a named GraphQL union.
RememberResult: TypeAlias = Annotated[Candidate | AnyUserError, strawberry.union(
    "RememberResult",
    description="The candidate (new or merged) as this caller proposed it, or why not.")]
AddCandidateResult: TypeAlias = Annotated[Candidate | AnyUserError, strawberry.union(
    "AddCandidateResult", description="The candidate, or why not.")]
SubmitTurnResult: TypeAlias = Annotated[TurnResult | AnyUserError, strawberry.union(
    "SubmitTurnResult", description="The stored turn, or why not.")]
ApproveCandidateResult: TypeAlias = Annotated[Memory | AnyUserError, strawberry.union(
    "ApproveCandidateResult", description="The new memory, or why the candidate was not approved.")]
RejectCandidateResult: TypeAlias = Annotated[Candidate | AnyUserError, strawberry.union(
    "RejectCandidateResult", description="The rejected candidate.")]
EditCandidateResult: TypeAlias = Annotated[Candidate | AnyUserError, strawberry.union(
    "EditCandidateResult", description="The edited candidate.")]
UpdateMemoryResult: TypeAlias = Annotated[Memory | AnyUserError, strawberry.union(
    "UpdateMemoryResult", description="The updated memory.")]
DeleteMemoryResult: TypeAlias = Annotated[Memory | AnyUserError, strawberry.union(
    "DeleteMemoryResult", description="The deleted memory, as it was.")]
ArchiveStaleResult: TypeAlias = Annotated[ArchiveResult | AnyUserError, strawberry.union(
    "ArchiveStaleResult", description="What the sweep archived.")]
SetAutoApprovePolicyResult: TypeAlias = Annotated[
    AutoApprovePolicy | AnyUserError,
    strawberry.union("SetAutoApprovePolicyResult", description="The policy now in force.")]
SetActivePersonaResult: TypeAlias = Annotated[ActivePersona | AnyUserError, strawberry.union(
    "SetActivePersonaResult", description="The active persona.")]
SetArchiveDaysResult: TypeAlias = Annotated[ArchiveWindow | AnyUserError, strawberry.union(
    "SetArchiveDaysResult", description="The archive window.")]
CreateTokenResult: TypeAlias = Annotated[CreatedToken | AnyUserError, strawberry.union(
    "CreateTokenResult", description="The new token (shown once).")]
RevokeTokenResult: TypeAlias = Annotated[ApiToken | AnyUserError, strawberry.union(
    "RevokeTokenResult", description="The revoked token.")]

IdArg = Annotated[strawberry.ID, strawberry.argument(description="The id.")]
ContentArg = Annotated[str, strawberry.argument(description="The memory text (up to 16 KB).")]
KindArg = Annotated[MemoryKind, strawberry.argument(description="One of the six kinds.")]
NamespaceArg = Annotated[str | None, strawberry.argument(
    description="`persona:<name>` or `workspace:<name>`; default: the active persona.")]
ReasonArg = Annotated[str | None, strawberry.argument(
    description="Why (kept in the audit trail).")]
TurnArg = Annotated[TurnInput, strawberry.argument(
    description="The conversation, turn id and messages.")]
IdsArg = Annotated[list[strawberry.ID], strawberry.argument(
    description=f"Candidate ids (at most {MAX_BULK}).")]


@strawberry.type(description="The outcome for one id of a bulk approve.")
class BulkApproveItem:
    id: strawberry.ID = strawberry.field(description="The candidate id.")
    result: ApproveCandidateResult = strawberry.field(description="Its memory, or why not.")


@strawberry.type(description="The outcome for one id of a bulk reject.")
class BulkRejectItem:
    id: strawberry.ID = strawberry.field(description="The candidate id.")
    result: RejectCandidateResult = strawberry.field(description="Its candidate, or why not.")


def _submit(service: MemoryService, who: Principal, item: CandidateInput) -> Receipt:
    return service.submit(item, who).receipt


@strawberry.type
class IntakeMutation:
    @fields.mutation(description="An agent remembers something (source EXPLICIT). It joins "
                                  "the queue as a candidate (or merges with its equivalent); "
                                  "agents recall it only after approval.")
    async def remember(
        self, info: Info[Context, Any], content: ContentArg, kind: KindArg,
        namespace: NamespaceArg = None,
        confidence: Annotated[float, strawberry.argument(
            description="How sure the agent is (0–1).")] = 1.0,
    ) -> RememberResult:
        c = info.context
        item = CandidateInput(content=content, kind=kind.core(), namespace=namespace,
                              source=Source.EXPLICIT, confidence=confidence)
        return mapped(await attempt(_submit, c.service, c.who, item), Candidate.of_receipt)

    @fields.mutation(description="A person adds a candidate by hand (source MANUAL; "
                                  "reviewers).")
    async def add_candidate(
        self, info: Info[Context, Any], content: ContentArg, kind: KindArg,
        namespace: NamespaceArg = None,
    ) -> AddCandidateResult:
        c = info.context
        item = CandidateInput(content=content, kind=kind.core(), namespace=namespace,
                              source=Source.MANUAL, confidence=1.0)
        return mapped(await attempt(_submit, c.service, c.who, item), Candidate.of_receipt)

    @fields.mutation(description="Submit the last exchange of a conversation for extraction "
                                  "(source TURN). Idempotent per conversation and turn id.")
    async def submit_turn(self, info: Info[Context, Any], input: TurnArg) -> SubmitTurnResult:
        c = info.context
        result = await attempt(c.service.submit_turn, input.core("turn"), c.who)
        return mapped(result, TurnResult.of)

    @fields.mutation(description="Submit the messages about to be compacted (source "
                                  "COMPACTION): what isn't extracted now is lost for good.")
    async def submit_compaction(
        self, info: Info[Context, Any], input: TurnArg,
    ) -> SubmitTurnResult:
        c = info.context
        result = await attempt(c.service.submit_turn, input.core("compaction"), c.who)
        return mapped(result, TurnResult.of)


@strawberry.type
class ReviewMutation:
    @fields.mutation(description="Approve a pending candidate, optionally with edits: what "
                                  "is approved is what the reviewer saw. `supersede` retires "
                                  "an approved memory in the same step.")
    async def approve_candidate(
        self, info: Info[Context, Any], id: IdArg,
        edit: Annotated[CandidateEditInput | None, strawberry.argument(
            description="Corrections applied before approving.")] = None,
        supersede: Annotated[strawberry.ID | None, strawberry.argument(
            description="An approved memory this one replaces; it is deleted.")] = None,
        reason: ReasonArg = None,
    ) -> ApproveCandidateResult:
        c = info.context
        result = await attempt(c.service.approve, str(id), c.who, edit=edit_or_none(edit),
                               supersede=str(supersede) if supersede else None, reason=reason)
        return mapped(result, Memory.of)

    @fields.mutation(description="Reject a pending candidate; equivalents are counted on it "
                                  "from now on instead of being queued again.")
    async def reject_candidate(
        self, info: Info[Context, Any], id: IdArg, reason: ReasonArg = None,
    ) -> RejectCandidateResult:
        c = info.context
        return mapped(await attempt(c.service.reject, str(id), c.who, reason), Candidate.of)

    @fields.mutation(description="Approve several candidates; one result per id.")
    async def approve_candidates(
        self, info: Info[Context, Any], ids: IdsArg,
    ) -> list[BulkApproveItem]:
        c = info.context
        done = await call(c.service.approve_many, [str(i) for i in ids], c.who)
        return [BulkApproveItem(id=strawberry.ID(cid), result=outcome(r, Memory.of))
                for cid, r in done]

    @fields.mutation(description="Reject several candidates; one result per id.")
    async def reject_candidates(
        self, info: Info[Context, Any], ids: IdsArg, reason: ReasonArg = None,
    ) -> list[BulkRejectItem]:
        c = info.context
        done = await call(c.service.reject_many, [str(i) for i in ids], c.who, reason)
        return [BulkRejectItem(id=strawberry.ID(cid), result=outcome(r, Candidate.of))
                for cid, r in done]

    @fields.mutation(description="Correct a pending candidate's content, kind or namespace.")
    async def edit_candidate(
        self, info: Info[Context, Any], id: IdArg,
        edit: Annotated[CandidateEditInput, strawberry.argument(description="The corrections.")],
    ) -> EditCandidateResult:
        c = info.context
        result = await attempt(c.service.edit_candidate, str(id), edit.core(), c.who)
        return mapped(result, Candidate.of)

    @fields.mutation(description="Edit an approved memory (it is re-embedded).")
    async def update_memory(
        self, info: Info[Context, Any], id: IdArg,
        edit: Annotated[CandidateEditInput, strawberry.argument(description="The changes.")],
    ) -> UpdateMemoryResult:
        c = info.context
        result = await attempt(c.service.update_memory, str(id), edit.core(), c.who)
        return mapped(result, Memory.of)

    @fields.mutation(description="Delete an approved memory; recall stops returning it.")
    async def delete_memory(
        self, info: Info[Context, Any], id: IdArg, reason: ReasonArg = None,
    ) -> DeleteMemoryResult:
        c = info.context
        return mapped(await attempt(c.service.delete_memory, str(id), c.who, reason), Memory.of)

    @fields.mutation(description="Archive pending candidates untouched for the archive "
                                  "window (or `olderThanDays`) now.")
    async def archive_stale(
        self, info: Info[Context, Any],
        older_than_days: Annotated[int | None, strawberry.argument(
            description="Override the window (0–3650 days).")] = None,
    ) -> ArchiveStaleResult:
        c = info.context
        result = await attempt(c.service.archive_stale, c.who, older_than_days)
        return mapped(result, lambda found: ArchiveResult(
            count=len(found), candidates=[Candidate.of(x) for x in found]))


@strawberry.type
class AdminMutation:
    @fields.mutation(description="Replace the auto-approve policy (admins). Pending "
                                  "candidates that now qualify are promoted at once.")
    async def set_auto_approve_policy(
        self, info: Info[Context, Any],
        input: Annotated[AutoApprovePolicyInput, strawberry.argument(
            description="The whole policy; it replaces the current one.")],
    ) -> SetAutoApprovePolicyResult:
        c = info.context

        def apply() -> CorePolicy:
            return c.service.set_policy(input.core(), c.who)

        return mapped(await attempt(apply), AutoApprovePolicy.of)

    @fields.mutation(description="Set the active persona (admins).")
    async def set_active_persona(
        self, info: Info[Context, Any],
        name: Annotated[str, strawberry.argument(description="The persona's slug.")],
    ) -> SetActivePersonaResult:
        c = info.context
        result = await attempt(c.service.set_active_persona, name, c.who)
        return mapped(result, lambda n: ActivePersona(name=n, namespace=f"persona:{n}"))

    @fields.mutation(description="Set the archive window in days (admins).")
    async def set_archive_days(
        self, info: Info[Context, Any],
        days: Annotated[int, strawberry.argument(description="1–3650 days.")],
    ) -> SetArchiveDaysResult:
        c = info.context
        return mapped(await attempt(c.service.set_archive_days, days, c.who),
                      lambda d: ArchiveWindow(days=d))

    @fields.mutation(description="Create an API token (admins). The plaintext is returned "
                                  "this once.")
    async def create_token(
        self, info: Info[Context, Any],
        role: Annotated[TokenRole, strawberry.argument(description="What it may do.")],
        namespaces: Annotated[list[str] | None, strawberry.argument(
            description="Limit it to these namespaces (default: all).")] = None,
        name: Annotated[str | None, strawberry.argument(description="A label.")] = None,
    ) -> CreateTokenResult:
        c = info.context
        result = await attempt(c.service.create_token, role.core(), c.who,
                               namespaces=namespaces, name=name)
        return mapped(result, lambda r: CreatedToken(token=r[1], info=ApiToken.of(r[0])))

    @fields.mutation(description="Revoke an API token (admins); it stops working at once.")
    async def revoke_token(self, info: Info[Context, Any], id: IdArg) -> RevokeTokenResult:
        c = info.context
        return mapped(await attempt(c.service.revoke_token, str(id), c.who), ApiToken.of)
