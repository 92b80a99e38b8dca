"""The candidate matcher with the fake embedder: find, add, discard, reset."""

from __future__ import annotations

from memvet.embeddings.equivalence import EmbeddingCandidateMatcher, numbers_of
from memvet.embeddings.fake import FakeEmbedder
from memvet.memory.kinds import Kind
from memvet.memory.ports import CandidateMatcher

NS = "workspace:shop-api"


def test_find_add_discard_reset() -> None:
    fake = FakeEmbedder()
    m = EmbeddingCandidateMatcher(fake)
    assert isinstance(m, CandidateMatcher)
    assert m.find(NS, Kind.FACT, "uses pnpm", threshold=0.5) is None
    m.add("c1", NS, Kind.FACT, "the project uses pnpm not npm")
    hit = m.find(NS, Kind.FACT, "the project uses pnpm not npm", threshold=0.99)
    assert hit is not None and hit.candidate_id == "c1" and hit.similarity > 0.99
    assert m.find(NS, Kind.DECISION, "the project uses pnpm not npm", threshold=0.5) is None
    assert m.find("workspace:other", Kind.FACT, "the project uses pnpm", threshold=0.5) is None
    m.discard(["c1", "unknown"])
    assert m.find(NS, Kind.FACT, "the project uses pnpm not npm", threshold=0.5) is None
    m.reset([("a", NS, Kind.FACT, "deploy on fridays"), ("b", NS, Kind.FACT, "never on mondays")])
    assert m.find(NS, Kind.FACT, "deploy on fridays", threshold=0.9).candidate_id == "a"  # type: ignore[union-attr]
    m.reset([])
    assert m.find(NS, Kind.FACT, "deploy on fridays", threshold=0.1) is None


def test_re_add_replaces_and_embeds_once_after_find() -> None:
    fake = FakeEmbedder()
    m = EmbeddingCandidateMatcher(fake)
    m.add("c0", NS, Kind.FACT, "something else entirely")
    m.find(NS, Kind.FACT, "text one", threshold=0.99)
    calls = fake.calls
    m.add("c1", NS, Kind.FACT, "text one")
    assert fake.calls == calls  # the vector from find() was reused
    m.add("c1", NS, Kind.EVENT, "text one")
    assert m.find(NS, Kind.FACT, "text one", threshold=0.5) is None
    assert m.find(NS, Kind.EVENT, "text one", threshold=0.5) is not None


def test_numbers_must_match() -> None:
    m = EmbeddingCandidateMatcher(FakeEmbedder())
    m.add("v", NS, Kind.EVENT, "released version 2.3.0 today")
    assert m.find(NS, Kind.EVENT, "released version 2.4.0 today", threshold=0.1) is None
    assert m.find(NS, Kind.EVENT, "today released version 2.3.0", threshold=0.5) is not None
    assert numbers_of("port 8080 and v2") == {"8080", "v2"}
