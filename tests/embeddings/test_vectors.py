"""Each text embedded once per model: the shared EmbeddingCache, the lazy matcher, the index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from memvet.embeddings.equivalence import EmbeddingCandidateMatcher
from memvet.embeddings.fake import FakeEmbedder
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.embeddings.vectors import EmbeddingCache
from memvet.memory.kinds import Kind
from memvet.memory.ports import IndexedMemory, VectorStore

NS = "workspace:shop-api"


class Counting(FakeEmbedder):
    """Counts texts, not calls."""

    def __init__(self, dimension: int = 384, model_id: str | None = None) -> None:
        super().__init__(dimension, model_id=model_id)
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += len(texts)
        return super().embed(texts)


class DictStore:
    """A VectorStore in a dict, as the database table would keep it."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], bytes] = {}
        self.saves = 0

    def load(self, model_id: str, hashes: Sequence[str]) -> dict[str, bytes]:
        return {h: self.rows[(model_id, h)] for h in hashes if (model_id, h) in self.rows}

    def save(self, model_id: str, vectors: Mapping[str, bytes]) -> None:
        self.saves += 1
        for h, v in vectors.items():
            self.rows.setdefault((model_id, h), v)


def test_a_text_is_embedded_once_and_read_back_after_a_restart() -> None:
    store, emb = DictStore(), Counting()
    assert isinstance(store, VectorStore)
    cache = EmbeddingCache(emb, store, batch_size=2)
    got = cache.vectors(["a b", "c d", "a b", "e f", "g h"])
    assert emb.texts == 4  # the repeat is embedded once
    assert np.allclose(got[0], got[2]) and np.allclose(got, np.asarray(emb.embed(
        ["a b", "c d", "a b", "e f", "g h"])))
    emb.texts = 0
    assert store.rows == {}  # nothing written until a flush (callers flush outside DB writes)
    cache.flush()
    assert len(store.rows) == 4
    again = EmbeddingCache(emb, store)  # a new process
    assert np.allclose(again.vectors(["g h", "a b"]), got[[4, 0]]) and emb.texts == 0
    # another model keeps its own vectors under its own id
    other = EmbeddingCache(Counting(256, model_id="other"), store)
    other.vectors(["a b"], save=True)
    assert other.embedded == 1 and ("other", next(iter(store.rows))[1]) in store.rows


def test_a_stored_vector_of_another_size_is_not_used() -> None:
    store, emb = DictStore(), Counting(8)
    cache = EmbeddingCache(emb, store)
    cache.vectors(["x"], save=True)
    (key,) = store.rows
    store.rows[key] = np.ones(4, dtype="<f4").tobytes()
    fresh = EmbeddingCache(emb, store)
    assert fresh.vectors(["x"]).shape == (1, 8) and fresh.embedded == 1


def test_wrong_dimension_from_the_model_is_refused() -> None:
    class Liar(FakeEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0, 0.0] for _ in texts]

    with pytest.raises(ValueError, match="2-d"):
        EmbeddingCache(Liar(8)).vectors(["x"])


def test_reset_embeds_nothing_and_a_group_is_read_on_first_find() -> None:
    store, emb = DictStore(), Counting()
    matcher = EmbeddingCandidateMatcher(EmbeddingCache(emb, store))
    items = [(f"c{i}", NS, Kind.FACT, f"note number {i} about deploys") for i in range(50)]
    items += [("d1", NS, Kind.DECISION, "we chose tauri over electron")]
    matcher.reset(items)
    assert emb.texts == 0
    hit = matcher.find(NS, Kind.DECISION, "we chose tauri over electron", threshold=0.9)
    assert hit is not None and hit.candidate_id == "d1"
    assert emb.texts == 1  # only the decision group was read (its one text is the query too)
    matcher.find(NS, Kind.FACT, "note number 7 about deploys", threshold=0.9)
    assert emb.texts == 51
    matcher.flush()
    # a restart: the queue's vectors come back from the store, nothing is embedded
    emb.texts = 0
    restarted = EmbeddingCandidateMatcher(EmbeddingCache(emb, store))
    restarted.reset(items)
    found = restarted.find(NS, Kind.FACT, "note number 7 about deploys", threshold=0.9)
    assert found is not None and found.candidate_id == "c7" and emb.texts == 0


def test_add_and_discard_before_a_group_is_read() -> None:
    emb = Counting()
    matcher = EmbeddingCandidateMatcher(emb)
    matcher.reset([("a", NS, Kind.FACT, "deploy on fridays"),
                   ("b", NS, Kind.FACT, "never deploy on mondays")])
    matcher.discard(["a"])
    matcher.add("c", NS, Kind.FACT, "release notes go in the changelog")
    matcher.add("b", NS, Kind.FACT, "deploys need two approvals")  # re-added, new text
    assert matcher.find(NS, Kind.FACT, "deploy on fridays", threshold=0.9) is None
    assert matcher.find(NS, Kind.FACT, "never deploy on mondays", threshold=0.95) is None
    hit = matcher.find(NS, Kind.FACT, "deploys need two approvals", threshold=0.9)
    assert hit is not None and hit.candidate_id == "b"
    hit = matcher.find(NS, Kind.FACT, "release notes go in the changelog", threshold=0.9)
    assert hit is not None and hit.candidate_id == "c"
    assert matcher.warm() == 0


def test_the_index_reads_what_the_matcher_embedded(client: Any) -> None:
    """Approving a candidate does not embed its text again: the index and the matcher share
    one cache (and the store behind it)."""
    store, emb = DictStore(), Counting()
    shared = EmbeddingCache(emb, store)
    matcher = EmbeddingCandidateMatcher(shared)
    index = ChromaMemoryIndex(client, shared)
    texts = [f"memory {i} about the shop api" for i in range(20)]
    for i, text in enumerate(texts):
        matcher.find(NS, Kind.FACT, text, threshold=0.99)
        matcher.add(f"c{i}", NS, Kind.FACT, text)
    assert emb.texts == 20
    index.upsert([IndexedMemory(f"m{i}", NS, Kind.FACT, t) for i, t in enumerate(texts)])
    assert emb.texts == 20
    # a fresh index over the same store (a reindex into a rebuilt Chroma) embeds nothing
    rebuilt = ChromaMemoryIndex(client, EmbeddingCache(emb, store), on_model_mismatch="rebuild")
    rebuilt.drop_namespace(NS)
    rebuilt.upsert([IndexedMemory(f"m{i}", NS, Kind.FACT, t) for i, t in enumerate(texts)])
    assert emb.texts == 20 and rebuilt.search("memory 3", [NS])[0].memory_id == "m3"
    # queries are embedded, never stored
    saved = len(store.rows)
    index.search("what about the shop api", [NS])
    assert len(store.rows) == saved
    index.close()
    rebuilt.close()


def test_a_failing_store_costs_embedding_never_an_answer() -> None:
    class Down(DictStore):
        def load(self, model_id: str, hashes: Sequence[str]) -> dict[str, bytes]:
            raise OSError("database gone")

        def save(self, model_id: str, vectors: Mapping[str, bytes]) -> None:
            raise OSError("database gone")

    emb = Counting()
    cache = EmbeddingCache(emb, Down())
    got = cache.vectors(["a", "b"], save=True)
    assert got.shape == (2, 384) and emb.texts == 2
    matcher = EmbeddingCandidateMatcher(cache)
    matcher.add("c1", NS, Kind.FACT, "a")  # stored later, if ever; the matcher has it now
    assert matcher.find(NS, Kind.FACT, "a", threshold=0.99) is not None
