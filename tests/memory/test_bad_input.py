"""Bad input: each gets a typed error with its stable code and leaves the store as it was.

Every case runs against a store that already holds a pending, an approved, a rejected and an
archived candidate (and a turn), so "as it was" is checked on a store with something in it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memvet.memory.errors import MemvetError
from memvet.memory.limits import MAX_CONTENT_BYTES, MAX_MESSAGE_BYTES, MAX_MESSAGES
from memvet.memory.policy import AutoApprovePolicy
from memvet.memory.ports import ExtractedCandidate, Message
from memvet.memory.records import CandidateEdit, CandidateInput, Source, TurnSubmission
from memvet.memory.service import MemoryService
from tests.memory.support import ADMIN, AGENT, REVIEWER, FakeClock, FakeExtractor, dump

NS = "workspace:shop"


@dataclass
class World:
    svc: MemoryService
    pending: str
    approved: str
    memory: str
    rejected: str
    archived: str


@pytest.fixture
def world(engine: Engine, clock: FakeClock) -> World:
    extractor = FakeExtractor(script={"we use pnpm": [
        ExtractedCandidate("the shop uses pnpm", "fact", NS, 0.8, "we use pnpm")]})  # type: ignore[arg-type]
    svc = MemoryService(engine=engine, clock=clock, extractor=extractor)

    def put(text: str) -> str:
        return svc.submit(CandidateInput(text, "fact", NS, Source.EXPLICIT, 0.6), AGENT
                          ).candidate.id

    archived = put("old news")
    clock.advance(days=31)
    svc.archive_stale(REVIEWER)
    pending = put("pending one")
    approved = put("approved one")
    memory = svc.approve(approved, REVIEWER).id
    rejected = put("rejected one")
    svc.reject(rejected, REVIEWER)
    svc.submit_turn(TurnSubmission("conv", "t1", [Message("user", "we use pnpm")],
                                   workspace="shop"), AGENT)
    yield World(svc, pending, approved, memory, rejected, archived)
    svc.close()


def cand(content: Any = "fine", kind: Any = "fact", ns: Any = NS,
         confidence: Any = 0.5) -> CandidateInput:
    return CandidateInput(content, kind, ns, Source.EXPLICIT, confidence)


def turn(messages: Any, **kw: Any) -> TurnSubmission:
    return TurnSubmission(kw.pop("conv", "conv-2"), kw.pop("turn", "t9"), messages, **kw)


CASES: dict[str, tuple[str, Callable[[World], Any]]] = {
    # kinds
    "seventh kind": ("INVALID_KIND", lambda w: w.svc.submit(cand(kind="insight"), AGENT)),
    "empty kind": ("INVALID_KIND", lambda w: w.svc.submit(cand(kind=""), AGENT)),
    "kind not text": ("INVALID_KIND", lambda w: w.svc.submit(cand(kind=3), AGENT)),
    # namespaces
    "unknown prefix": ("INVALID_NAMESPACE", lambda w: w.svc.submit(cand(ns="team:x"), AGENT)),
    "no prefix": ("INVALID_NAMESPACE", lambda w: w.svc.submit(cand(ns="shop"), AGENT)),
    "uppercase slug": ("INVALID_NAMESPACE",
                       lambda w: w.svc.submit(cand(ns="workspace:Shop"), AGENT)),
    "space in slug": ("INVALID_NAMESPACE",
                      lambda w: w.svc.submit(cand(ns="workspace:my shop"), AGENT)),
    "colon in slug": ("INVALID_NAMESPACE",
                      lambda w: w.svc.submit(cand(ns="workspace:a:b"), AGENT)),
    "slug of 129": ("INVALID_NAMESPACE",
                    lambda w: w.svc.submit(cand(ns="persona:" + "a" * 129), AGENT)),
    "empty slug": ("INVALID_NAMESPACE", lambda w: w.svc.submit(cand(ns="workspace:"), AGENT)),
    # content
    "empty content": ("VALIDATION", lambda w: w.svc.submit(cand(content=""), AGENT)),
    "blank content": ("VALIDATION", lambda w: w.svc.submit(cand(content=" \n\t "), AGENT)),
    "content over 16 KB": ("VALIDATION", lambda w: w.svc.submit(
        cand(content="x" * (MAX_CONTENT_BYTES + 1)), AGENT)),
    "content not text": ("VALIDATION", lambda w: w.svc.submit(cand(content=42), AGENT)),
    # confidence
    "confidence below 0": ("VALIDATION", lambda w: w.svc.submit(cand(confidence=-0.1), AGENT)),
    "confidence above 1": ("VALIDATION", lambda w: w.svc.submit(cand(confidence=1.5), AGENT)),
    "confidence NaN": ("VALIDATION", lambda w: w.svc.submit(cand(confidence=math.nan), AGENT)),
    "confidence inf": ("VALIDATION", lambda w: w.svc.submit(cand(confidence=math.inf), AGENT)),
    "confidence text": ("VALIDATION", lambda w: w.svc.submit(cand(confidence="sure"), AGENT)),
    # unknown ids
    "approve unknown": ("NOT_FOUND", lambda w: w.svc.approve("nope", REVIEWER)),
    "reject unknown": ("NOT_FOUND", lambda w: w.svc.reject("nope", REVIEWER)),
    "edit unknown": ("NOT_FOUND", lambda w: w.svc.edit_candidate(
        "nope", CandidateEdit(content="x"), REVIEWER)),
    "update unknown memory": ("NOT_FOUND", lambda w: w.svc.update_memory(
        "nope", CandidateEdit(content="x"), REVIEWER)),
    "delete unknown memory": ("NOT_FOUND", lambda w: w.svc.delete_memory("nope", REVIEWER)),
    "supersede unknown memory": ("NOT_FOUND", lambda w: w.svc.approve(
        w.pending, REVIEWER, supersede="nope")),
    "revoke unknown token": ("NOT_FOUND", lambda w: w.svc.revoke_token("nope", ADMIN)),
    # illegal transitions
    "approve rejected": ("INVALID_TRANSITION", lambda w: w.svc.approve(w.rejected, REVIEWER)),
    "approve archived": ("INVALID_TRANSITION", lambda w: w.svc.approve(w.archived, REVIEWER)),
    "approve approved": ("INVALID_TRANSITION", lambda w: w.svc.approve(w.approved, REVIEWER)),
    "reject approved": ("INVALID_TRANSITION", lambda w: w.svc.reject(w.approved, REVIEWER)),
    "reject rejected": ("INVALID_TRANSITION", lambda w: w.svc.reject(w.rejected, REVIEWER)),
    "reject archived": ("INVALID_TRANSITION", lambda w: w.svc.reject(w.archived, REVIEWER)),
    "edit approved": ("INVALID_TRANSITION", lambda w: w.svc.edit_candidate(
        w.approved, CandidateEdit(content="x"), REVIEWER)),
    # bad edits
    "ghost kind in an edit": ("INVALID_KIND", lambda w: w.svc.edit_candidate(
        w.pending, CandidateEdit(kind="insight"), REVIEWER)),
    "ghost kind in approve": ("INVALID_KIND", lambda w: w.svc.approve(
        w.pending, REVIEWER, edit=CandidateEdit(kind="insight"))),
    "bad namespace in approve": ("INVALID_NAMESPACE", lambda w: w.svc.approve(
        w.pending, REVIEWER, edit=CandidateEdit(namespace="project:x"))),
    "empty content in an edit": ("VALIDATION", lambda w: w.svc.edit_candidate(
        w.pending, CandidateEdit(content="  "), REVIEWER)),
    "empty edit": ("VALIDATION", lambda w: w.svc.edit_candidate(
        w.pending, CandidateEdit(), REVIEWER)),
    "ghost kind in a memory update": ("INVALID_KIND", lambda w: w.svc.update_memory(
        w.memory, CandidateEdit(kind="ghost"), REVIEWER)),
    "oversized memory update": ("VALIDATION", lambda w: w.svc.update_memory(
        w.memory, CandidateEdit(content="x" * (MAX_CONTENT_BYTES + 1)), REVIEWER)),
    "bad namespace in memory update": ("INVALID_NAMESPACE", lambda w: w.svc.update_memory(
        w.memory, CandidateEdit(namespace="Workspace:x"), REVIEWER)),
    # turn submissions
    "empty messages": ("VALIDATION", lambda w: w.svc.submit_turn(turn([]), AGENT)),
    "only blank messages": ("VALIDATION", lambda w: w.svc.submit_turn(
        turn([Message("user", "   ")]), AGENT)),
    "unknown role": ("VALIDATION", lambda w: w.svc.submit_turn(
        turn([Message("wizard", "hi")]), AGENT)),
    "oversized message": ("VALIDATION", lambda w: w.svc.submit_turn(
        turn([Message("user", "x" * (MAX_MESSAGE_BYTES + 1))]), AGENT)),
    "too many messages": ("VALIDATION", lambda w: w.svc.submit_turn(
        turn([Message("user", "hi")] * (MAX_MESSAGES + 1)), AGENT)),
    "message not text": ("VALIDATION", lambda w: w.svc.submit_turn(
        turn([{"role": "user", "content": 5}]), AGENT)),
    "empty conversation id": ("VALIDATION", lambda w: w.svc.submit_turn(
        turn([Message("user", "hi")], conv=""), AGENT)),
    "unknown trigger": ("VALIDATION", lambda w: w.svc.submit_turn(
        turn([Message("user", "hi")], trigger="whenever"), AGENT)),
    "bad workspace on a turn": ("INVALID_NAMESPACE", lambda w: w.svc.submit_turn(
        turn([Message("user", "hi")], workspace="My Shop"), AGENT)),
    "bad persona on a turn": ("INVALID_NAMESPACE", lambda w: w.svc.submit_turn(
        turn([Message("user", "hi")], persona="Alex!"), AGENT)),
    # settings
    "archive days zero": ("VALIDATION", lambda w: w.svc.set_archive_days(0, ADMIN)),
    "archive days huge": ("VALIDATION", lambda w: w.svc.set_archive_days(10**6, ADMIN)),
    "archive sweep negative": ("VALIDATION", lambda w: w.svc.archive_stale(
        REVIEWER, older_than_days=-1)),
    "bad active persona": ("INVALID_NAMESPACE", lambda w: w.svc.set_active_persona(
        "Alex Smith", ADMIN)),
    "bad policy": ("VALIDATION", lambda w: w.svc.set_policy(
        AutoApprovePolicy.from_json({"min_observations": 0}), ADMIN)),
    "bad page size": ("VALIDATION", lambda w: w.svc.list_candidates(REVIEWER, limit=0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_refused_and_changes_nothing(world: World, case: str) -> None:
    code, call = CASES[case]
    before = dump(world.svc.engine)
    with pytest.raises(MemvetError) as err:
        call(world)
    assert err.value.code == code, f"{case}: {err.value!r}"
    assert err.value.message  # a message a person can read
    assert dump(world.svc.engine) == before, f"{case} changed the store"


def test_world_is_what_the_cases_assume(world: World) -> None:
    from memvet.memory.records import Status

    got = {i: world.svc.get_candidate(i, REVIEWER).status
           for i in (world.pending, world.approved, world.rejected, world.archived)}
    assert got == {world.pending: Status.PENDING, world.approved: Status.APPROVED,
                   world.rejected: Status.REJECTED, world.archived: Status.ARCHIVED}
    assert world.svc.queue_stats(REVIEWER).pending == 2  # + the one the turn extracted
