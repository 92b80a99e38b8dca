"""Mutation inputs and the success types of mutations that don't return a record."""

from __future__ import annotations

import strawberry

from memvet.graph.enums import MemoryKind, SubmitOutcome
from memvet.graph.types import Candidate, Turn
from memvet.memory import records
from memvet.memory.ports import Message as CoreMessage
from memvet.memory.records import TurnResult as CoreTurnResult
from memvet.memory.records import TurnSubmission


@strawberry.input(name="CandidateEdit",
                  description="A reviewer's correction; omitted fields stay as they are.")
class CandidateEditInput:
    content: str | None = strawberry.field(default=None, description="New text.")
    kind: MemoryKind | None = strawberry.field(default=None, description="New kind.")
    namespace: str | None = strawberry.field(default=None, description="New namespace.")

    def core(self) -> records.CandidateEdit:
        return records.CandidateEdit(
            content=self.content, kind=self.kind.core() if self.kind else None,
            namespace=self.namespace)


def edit_or_none(edit: CandidateEditInput | None) -> records.CandidateEdit | None:
    if edit is None:
        return None
    core = edit.core()
    return None if core.is_empty() else core


@strawberry.input(description="One message of a conversation.")
class MessageInput:
    role: str = strawberry.field(description="user, assistant, system or tool.")
    content: str = strawberry.field(description="The message text (up to 64 KB).")


@strawberry.input(description="A conversation turn (or the stretch about to be compacted) to "
                              "extract candidates from.")
class TurnInput:
    conversation_id: str = strawberry.field(description="The agent's conversation id.")
    turn_id: str = strawberry.field(
        description="The agent's turn id; re-submitting the same one is idempotent.")
    messages: list[MessageInput] = strawberry.field(description="The messages.")
    workspace: str | None = strawberry.field(
        default=None, description="The project's workspace slug (`shop-api`, not "
                                  "`workspace:shop-api`).")
    persona: str | None = strawberry.field(
        default=None, description="The persona slug; default: the active persona.")

    def core(self, trigger: str) -> TurnSubmission:
        return TurnSubmission(
            conversation_id=self.conversation_id, turn_id=self.turn_id,
            messages=[CoreMessage(m.role, m.content) for m in self.messages],
            workspace=self.workspace, persona=self.persona, trigger=trigger)


@strawberry.type(description="What happened to one submitted candidate.")
class SubmittedCandidate:
    candidate: Candidate = strawberry.field(
        description="The candidate as this caller proposed it (its id and status), never what "
                    "a reviewer or another caller wrote on it.")
    outcome: SubmitOutcome = strawberry.field(description="Created, merged, reinforced...")
    auto_approved: bool = strawberry.field(
        description="The auto-approve policy promoted it to memory just now.")

    @classmethod
    def of(cls, r: records.SubmitResult) -> SubmittedCandidate:
        return cls(candidate=Candidate.of_receipt(r.receipt),
                   outcome=SubmitOutcome(r.outcome.value), auto_approved=r.auto_approved)


@strawberry.type(description="A stored turn and the candidates extracted from it.")
class TurnResult:
    turn_id: strawberry.ID = strawberry.field(description="The stored turn's id (for turn(id)).")
    turn: Turn = strawberry.field(description="The stored turn.")
    candidates: list[Candidate] = strawberry.field(
        description="The candidates it produced (empty while `queued`).")
    results: list[SubmittedCandidate] = strawberry.field(
        description="The candidates with what happened to each.")
    queued: bool = strawberry.field(
        description="Extraction runs in the background; candidates arrive as review events.")
    duplicate: bool = strawberry.field(
        description="This turn was submitted before; nothing new was counted.")

    @classmethod
    def of(cls, r: CoreTurnResult) -> TurnResult:
        return cls(
            turn_id=strawberry.ID(r.turn.id), turn=Turn.of(r.turn),
            candidates=[Candidate.of_receipt(x.receipt) for x in r.results],
            results=[SubmittedCandidate.of(x) for x in r.results],
            queued=r.queued, duplicate=r.duplicate)


@strawberry.type(description="The result of an archive sweep.")
class ArchiveResult:
    count: int = strawberry.field(description="How many candidates were archived.")
    candidates: list[Candidate] = strawberry.field(description="The archived candidates.")


@strawberry.type(description="The archive window.")
class ArchiveWindow:
    days: int = strawberry.field(
        description="Pending candidates untouched this many days are archived.")


@strawberry.type(description="The active persona: where memories with no namespace go.")
class ActivePersona:
    name: str = strawberry.field(description="The persona's name.")
    namespace: str = strawberry.field(description="Its namespace, `persona:<name>`.")
