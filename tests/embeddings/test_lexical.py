"""Tokeniser, BM25, fusion and the fake embedder."""

from __future__ import annotations

import math

from memvet.embeddings.fake import FakeEmbedder
from memvet.embeddings.fusion import convex_fusion, rrf_fusion
from memvet.embeddings.lexical import BM25Index, stem, tokenize


def test_tokenize_keeps_exact_names_and_their_parts() -> None:
    tokens = tokenize("Run orders.int.spec.ts with pnpm on Tauri, shop-api/v2")
    for expected in ("orders.int.spec.ts", "order", "spec", "ts", "pnpm", "tauri", "shop-api/v2"):
        assert expected in tokens


def test_tokenize_drops_stop_words_and_stems() -> None:
    assert tokenize("What did the user say about the deployments?") == ["user", "say", "deployment"]
    assert stem("painted") == stem("painting") == "paint"
    assert stem("libraries") == "library"


def test_bm25_ranks_rare_exact_name_first_and_forgets_removed() -> None:
    index = BM25Index()
    index.add("a", "The project uses pnpm, not npm")
    index.add("b", "The project uses a monorepo")
    index.add("c", "Use npm scripts for the project tasks")
    hits = index.search(tokenize("pnpm"), limit=5)
    assert [h.doc_id for h in hits] == ["a"]
    index.remove(["a"])
    assert index.search(tokenize("pnpm"), limit=5) == []
    assert len(index) == 2
    assert [h.doc_id for h in index.search(tokenize("project"), limit=5, allow={"b"})] == ["b"]


def test_bm25_readd_replaces_document() -> None:
    index = BM25Index()
    index.add("a", "alpha")
    index.add("a", "beta")
    assert index.search(["alpha"], limit=3) == []
    assert [h.doc_id for h in index.search(["beta"], limit=3)] == ["a"]


def test_convex_fusion_scales_each_side_by_its_best() -> None:
    fused = convex_fusion({"a": 0.8, "b": 0.4}, {"b": 6.0, "c": 3.0}, alpha=0.5)
    assert math.isclose(fused["a"], 0.5)
    assert math.isclose(fused["b"], 0.25 + 0.5)
    assert math.isclose(fused["c"], 0.25)
    rrf = rrf_fusion({"a": 0.8, "b": 0.4}, {"b": 6.0})
    assert max(rrf, key=rrf.__getitem__) == "b"


def test_fake_embedder_is_deterministic_unit_and_word_sensitive() -> None:
    e = FakeEmbedder(64)
    a, b, c = e.embed(["uses pnpm for packages", "uses pnpm for packages", "bundle with tauri"])
    assert a == b and len(a) == 64
    assert math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-9)
    same = sum(x * y for x, y in zip(a, b, strict=True))
    other = sum(x * y for x, y in zip(a, c, strict=True))
    assert same > other
