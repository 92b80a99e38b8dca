"""submit_turn with a fake Extractor: origins, idempotency, quiet turns, background queue."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy.engine import Engine

from memvet.memory.errors import NotFound
from memvet.memory.kinds import Kind
from memvet.memory.ports import ExtractedCandidate, Message
from memvet.memory.records import Outcome, Source, Status, TurnSubmission
from memvet.memory.service import MemoryService
from tests.memory.support import AGENT, OTHER_AGENT, REVIEWER, FakeClock, FakeExtractor, dump

NS = "workspace:shop"
SCRIPT = {
    "we use pnpm here, never npm": [
        ExtractedCandidate("The shop uses pnpm, not npm", Kind.FACT, NS, 0.8,
                           "we use pnpm here"),
    ],
    "I like short answers": [
        ExtractedCandidate("Prefers short answers", Kind.PREFERENCE, "persona:default", 0.6),
        ExtractedCandidate("a ghost", "insight", NS, 0.9),  # type: ignore[arg-type]
        ExtractedCandidate("bad namespace", Kind.FACT, "team:x", 0.9),
        ExtractedCandidate("bad confidence", Kind.FACT, NS, 3.0),
        ExtractedCandidate("   ", Kind.FACT, NS, 0.9),
    ],
}


def make(engine: Engine, clock: FakeClock, **kw: object) -> tuple[MemoryService, FakeExtractor]:
    extractor = FakeExtractor(script=SCRIPT, **kw)  # type: ignore[arg-type]
    return MemoryService(engine=engine, clock=clock, extractor=extractor), extractor


def sub(text: str, turn: str = "t1", trigger: str = "turn", conv: str = "conv-1"
        ) -> TurnSubmission:
    return TurnSubmission(conv, turn, [Message("user", text), Message("assistant", "ok")],
                          workspace="shop", trigger=trigger)


def test_turn_extracts_candidates_with_their_origin(engine: Engine, clock: FakeClock) -> None:
    svc, _ = make(engine, clock)
    res = svc.submit_turn(sub("we use pnpm here, never npm"), AGENT)
    assert not res.duplicate and not res.queued
    assert res.turn.status == "done" and res.turn.extractor == "fake"
    assert res.turn.workspace == "shop" and res.turn.persona == "default"
    [r] = res.results
    c = r.candidate
    assert (r.outcome, c.source, c.kind, c.namespace, c.content, c.confidence) == (
        Outcome.CREATED, Source.TURN, Kind.FACT, NS, "The shop uses pnpm, not npm", 0.8)
    [o] = svc.origins(c.id, REVIEWER)
    assert (o.turn_ref, o.conversation_id, o.turn_id, o.excerpt, o.source) == (
        res.turn.id, "conv-1", "t1", "we use pnpm here", Source.TURN)
    # jump to the original turn
    stored = svc.turn(o.turn_ref or "", REVIEWER)
    assert stored.messages == [{"role": "user", "content": "we use pnpm here, never npm"},
                               {"role": "assistant", "content": "ok"}]
    assert svc.turn(o.turn_ref or "", AGENT).id == res.turn.id
    with pytest.raises(NotFound):
        svc.turn(o.turn_ref or "", OTHER_AGENT)
    svc.close()


def test_same_turn_is_idempotent(engine: Engine, clock: FakeClock) -> None:
    svc, extractor = make(engine, clock)
    first = svc.submit_turn(sub("we use pnpm here, never npm"), AGENT)
    before = dump(engine)
    again = svc.submit_turn(sub("we use pnpm here, never npm"), AGENT)
    assert again.duplicate and again.turn.id == first.turn.id
    assert [r.outcome for r in again.results] == [Outcome.DUPLICATE]
    assert [r.candidate.id for r in again.results] == [first.results[0].candidate.id]
    assert extractor.calls == 1
    assert dump(engine) == before
    # the same text in another turn counts as a second observation
    other = svc.submit_turn(sub("we use pnpm here, never npm", turn="t2"), AGENT)
    assert other.results[0].outcome is Outcome.MERGED
    assert other.results[0].candidate.observations == 2
    # a compaction pass over the same turn is a different trigger; same turn id: counted once
    comp = svc.submit_turn(sub("we use pnpm here, never npm", trigger="compaction"), AGENT)
    assert not comp.duplicate
    assert comp.results[0].outcome is Outcome.DUPLICATE
    assert svc.get_candidate(first.results[0].candidate.id, REVIEWER).observations == 2
    svc.close()


def test_compaction_source(engine: Engine, clock: FakeClock) -> None:
    svc, _ = make(engine, clock)
    res = svc.submit_turn(sub("we use pnpm here, never npm", trigger="compaction"), AGENT)
    assert res.results[0].candidate.source is Source.COMPACTION
    svc.close()


def test_quiet_turn_adds_no_candidate(engine: Engine, clock: FakeClock) -> None:
    svc, _ = make(engine, clock)
    res = svc.submit_turn(sub("how is the weather?"), AGENT)
    assert res.results == []
    assert svc.queue_stats(REVIEWER).pending == 0
    assert svc.list_candidates(REVIEWER).total == 0
    svc.close()


def test_ghosts_and_bad_items_from_the_extractor_are_dropped(engine: Engine,
                                                              clock: FakeClock) -> None:
    svc, _ = make(engine, clock)
    res = svc.submit_turn(sub("I like short answers"), AGENT)
    assert [r.candidate.content for r in res.results] == ["Prefers short answers"]
    assert {c.kind for c in svc.list_candidates(REVIEWER).items} == {Kind.PREFERENCE}
    svc.close()


def test_no_extractor_stores_the_turn_only(engine: Engine, clock: FakeClock) -> None:
    svc = MemoryService(engine=engine, clock=clock)
    res = svc.submit_turn(sub("we use pnpm here, never npm"), AGENT)
    assert res.results == [] and res.turn.extractor is None
    svc.close()


def test_background_extractor_is_queued(engine: Engine, clock: FakeClock) -> None:
    gate = threading.Event()
    svc, extractor = make(engine, clock, background=True, gate=gate)
    res = svc.submit_turn(sub("we use pnpm here, never npm"), AGENT)
    assert res.queued and res.results == [] and res.turn.status == "queued"
    res2 = svc.submit_turn(sub("I like short answers", turn="t2"), AGENT)
    assert res2.queued
    assert svc.extraction_backlog() == 2
    assert svc.queue_stats(REVIEWER).extraction_backlog == 2
    # a duplicate of a queued turn says queued and does not queue it again
    dup = svc.submit_turn(sub("we use pnpm here, never npm"), AGENT)
    assert dup.duplicate and dup.queued
    gate.set()
    deadline = time.monotonic() + 20
    while svc.extraction_backlog() and time.monotonic() < deadline:
        time.sleep(0.02)
    svc.close()  # waits for the pool
    assert svc.extraction_backlog() == 0
    assert extractor.calls == 2
    assert svc.turn(res.turn.id, REVIEWER).status == "done"
    contents = {c.content for c in svc.list_candidates(REVIEWER).items}
    assert contents == {"The shop uses pnpm, not npm", "Prefers short answers"}
    assert all(c.status is Status.PENDING for c in svc.list_candidates(REVIEWER).items)


def test_background_backlog_limit(engine: Engine, clock: FakeClock) -> None:
    from memvet.memory.errors import ValidationError

    gate = threading.Event()
    extractor = FakeExtractor(script=SCRIPT, background=True, gate=gate)
    svc = MemoryService(engine=engine, clock=clock, extractor=extractor,
                        extraction_backlog_limit=1)
    svc.submit_turn(sub("we use pnpm here, never npm"), AGENT)
    with pytest.raises(ValidationError):
        svc.submit_turn(sub("I like short answers", turn="t2"), AGENT)
    gate.set()
    svc.close()
