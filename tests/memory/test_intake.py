"""Intake on a real store (SQLite and PostgreSQL): merge, idempotency, reinforce, revive."""

from __future__ import annotations

from memvet.memory.access import Principal
from memvet.memory.records import (
    Action,
    CandidateInput,
    OriginInput,
    Outcome,
    Source,
    Status,
)
from memvet.memory.service import MemoryService
from tests.memory.support import ADMIN, AGENT, REVIEWER, FakeClock

NS = "workspace:shop"


def remember(svc: MemoryService, content: str, *, kind: str = "fact", ns: str | None = NS,
             confidence: float = 0.5, conv: str | None = None, turn: str | None = None,
             who: Principal = AGENT, source: Source = Source.EXPLICIT,
             excerpt: str | None = None):
    origin = OriginInput(conv, turn, excerpt) if (conv or turn or excerpt) else None
    return svc.submit(CandidateInput(content, kind, ns, source, confidence, origin), who)


def test_new_candidate_is_pending_with_every_field(service: MemoryService,
                                                   clock: FakeClock) -> None:
    r = remember(service, "The shop API uses pnpm", conv="c1", turn="t1", excerpt="we use pnpm",
                 confidence=0.7)
    c = r.candidate
    assert r.outcome is Outcome.CREATED and not r.auto_approved
    assert (c.content, c.kind.value, c.namespace, c.source, c.confidence, c.observations,
            c.status) == ("The shop API uses pnpm", "fact", NS, Source.EXPLICIT, 0.7, 1,
                          Status.PENDING)
    assert c.created_at == c.last_observed_at == c.touched_at == clock.now
    assert c.created_by == AGENT.id and c.reviewed_at is None and c.reviewed_by is None
    stored = service.get_candidate(c.id, REVIEWER)
    assert stored == c
    [origin] = service.origins(c.id, REVIEWER)
    assert (origin.conversation_id, origin.turn_id, origin.excerpt, origin.confidence) == (
        "c1", "t1", "we use pnpm", 0.7)
    [t] = service.transitions(c.id, REVIEWER)
    assert (t.action, t.from_status, t.to_status, t.actor, t.at) == (
        Action.CREATED, None, Status.PENDING, AGENT.actor, clock.now)
    assert t.changes is not None and t.changes["content"]["to"] == "The shop API uses pnpm"


def test_no_namespace_goes_to_the_active_persona(service: MemoryService) -> None:
    assert remember(service, "prefers short answers", ns=None,
                    kind="preference").candidate.namespace == "persona:default"
    service.set_active_persona("alex", ADMIN)
    assert service.active_persona(AGENT) == "alex"
    assert remember(service, "prefers tabs", ns=None,
                    kind="preference").candidate.namespace == "persona:alex"


def test_equivalent_texts_merge(service: MemoryService, clock: FakeClock) -> None:
    first = remember(service, "Use pnpm, not npm.", confidence=0.4, conv="c1", turn="1")
    clock.advance(hours=1)
    variants = ["use PNPM, not npm", "  Use   pnpm,\nnot npm!", "\"USE PNPM, NOT NPM\""]
    for i, text in enumerate(variants):
        r = remember(service, text, confidence=0.9 if i == 0 else 0.2, conv="c2", turn=str(i))
        assert r.outcome is Outcome.MERGED
        assert r.candidate.id == first.candidate.id
    c = service.get_candidate(first.candidate.id, REVIEWER)
    assert c.observations == 4
    assert c.confidence == 0.9  # the highest seen, not the last
    assert c.content == "Use pnpm, not npm."  # the first wording stays
    assert c.last_observed_at == clock.now and c.created_at < clock.now
    origins = service.origins(c.id, REVIEWER)
    assert sorted((o.conversation_id, o.turn_id) for o in origins) == [
        ("c1", "1"), ("c2", "0"), ("c2", "1"), ("c2", "2")]
    actions = [t.action for t in service.transitions(c.id, REVIEWER)]
    assert actions == [Action.CREATED] + [Action.MERGED] * 3
    assert service.queue_stats(REVIEWER).pending == 1


def test_no_merge_across_namespace_or_kind(service: MemoryService) -> None:
    a = remember(service, "use pnpm").candidate
    b = remember(service, "use pnpm", ns="workspace:other").candidate
    c = remember(service, "use pnpm", kind="decision").candidate
    assert len({a.id, b.id, c.id}) == 3


def test_same_turn_counts_once(service: MemoryService) -> None:
    first = remember(service, "use pnpm", conv="c1", turn="t1")
    again = remember(service, "Use pnpm.", conv="c1", turn="t1", confidence=1.0)
    assert again.outcome is Outcome.DUPLICATE
    assert again.candidate.observations == 1
    c = service.get_candidate(first.candidate.id, REVIEWER)
    assert c.observations == 1 and c.confidence == 0.5
    assert len(service.origins(c.id, REVIEWER)) == 1
    assert len(service.transitions(c.id, REVIEWER)) == 1
    # another turn of the same conversation counts
    assert remember(service, "use pnpm", conv="c1", turn="t2").outcome is Outcome.MERGED
    # without a turn reference every submission counts
    assert remember(service, "use pnpm").outcome is Outcome.MERGED
    assert service.get_candidate(c.id, REVIEWER).observations == 3


def test_equivalent_of_approved_reinforces_the_memory(service: MemoryService) -> None:
    c = remember(service, "use pnpm").candidate
    mem = service.approve(c.id, REVIEWER)
    assert mem.observations == 1
    r = remember(service, "USE PNPM!", conv="c9", turn="1", confidence=0.95)
    assert r.outcome is Outcome.REINFORCED
    assert r.candidate.id == c.id and r.candidate.status is Status.APPROVED
    assert service.get_memory(mem.id, REVIEWER).observations == 2
    assert service.get_candidate(c.id, REVIEWER).observations == 2
    assert service.queue_stats(REVIEWER).pending == 0
    last = service.transitions(c.id, REVIEWER)[-1]
    assert (last.action, last.memory_id, last.from_status, last.to_status) == (
        Action.REINFORCED, mem.id, Status.APPROVED, Status.APPROVED)


def test_equivalent_of_approved_edit_reinforces_too(service: MemoryService) -> None:
    """Both the proposed wording and the approved (edited) wording find the memory."""
    from memvet.memory.records import CandidateEdit

    c = remember(service, "we use pnpm i think").candidate
    mem = service.approve(c.id, REVIEWER, edit=CandidateEdit(content="The shop uses pnpm."))
    assert remember(service, "we use pnpm I think").outcome is Outcome.REINFORCED
    assert remember(service, "the shop uses pnpm").outcome is Outcome.REINFORCED
    assert service.get_memory(mem.id, REVIEWER).observations == 3


def test_rejected_stays_rejected_but_counted(service: MemoryService) -> None:
    c = remember(service, "use yarn").candidate
    service.reject(c.id, REVIEWER, reason="wrong")
    r = remember(service, "Use yarn.", confidence=1.0)
    assert r.outcome is Outcome.REINFORCED
    cand = service.get_candidate(c.id, REVIEWER)
    assert cand.status is Status.REJECTED and cand.observations == 2 and cand.confidence == 1.0
    assert service.queue_stats(REVIEWER).pending == 0


def test_archived_comes_back_to_pending(service: MemoryService, clock: FakeClock) -> None:
    c = remember(service, "use pnpm").candidate
    clock.advance(days=31)
    assert [a.id for a in service.archive_stale(REVIEWER)] == [c.id]
    assert service.get_candidate(c.id, REVIEWER).status is Status.ARCHIVED
    r = remember(service, "use pnpm")
    assert r.outcome is Outcome.REVIVED
    cand = service.get_candidate(c.id, REVIEWER)
    assert cand.status is Status.PENDING and cand.observations == 2
    assert cand.touched_at == clock.now
    t = service.transitions(c.id, REVIEWER)[-1]
    assert (t.action, t.from_status, t.to_status) == (
        Action.REVIVED, Status.ARCHIVED, Status.PENDING)


def test_merge_prefers_the_pending_equivalent(service: MemoryService) -> None:
    old = remember(service, "use pnpm").candidate
    service.reject(old.id, REVIEWER)
    # an edit can make a second candidate equivalent to a rejected one
    from memvet.memory.records import CandidateEdit

    new = remember(service, "use pnpm please").candidate
    service.edit_candidate(new.id, CandidateEdit(content="use pnpm"), REVIEWER)
    r = remember(service, "Use pnpm")
    assert r.candidate.id == new.id and r.outcome is Outcome.MERGED


def test_manual_source_needs_a_reviewer(service: MemoryService) -> None:
    import pytest

    from memvet.memory.errors import Forbidden

    with pytest.raises(Forbidden):
        remember(service, "x", source=Source.MANUAL, who=AGENT)
    c = remember(service, "x", source=Source.MANUAL, who=REVIEWER).candidate
    assert c.source is Source.MANUAL
