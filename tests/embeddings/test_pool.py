"""Recall over many namespaces: the in-memory namespaces' vectors searched as one matrix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memvet.embeddings.fake import FakeEmbedder
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.embeddings.pool import Pool
from memvet.embeddings.search import RankingSettings
from memvet.memory.kinds import Kind
from memvet.memory.ports import IndexedMemory

KINDS = list(Kind)
TOPICS = ["pnpm", "deploys", "tauri", "postgres", "ruff", "release train", "feature flags"]
QUERIES = ["how do we deploy", "pnpm or npm", "which database", "release on tuesday",
           "lint with ruff", "tauri bundle size"]


def memories(n_ns: int, per_ns: int) -> list[IndexedMemory]:
    return [
        IndexedMemory(f"m{ns}-{i}", f"workspace:ns-{ns}", KINDS[(ns + i) % len(KINDS)],
                      f"note {i} in {ns}: {TOPICS[(ns * 3 + i) % len(TOPICS)]} "
                      f"{TOPICS[(ns + 2 * i) % len(TOPICS)]}")
        for ns in range(n_ns) for i in range(per_ns)
    ]


def hits(index: ChromaMemoryIndex, query: str, namespaces: list[str],
         kinds: list[Kind] | None = None) -> list[tuple[str, float]]:
    return [(h.memory_id, round(h.score, 5))
            for h in index.search(query, namespaces, kinds=kinds, limit=10)]


def test_the_pool_finds_what_namespace_by_namespace_search_finds(client: Any) -> None:
    fake = FakeEmbedder()
    pooled = ChromaMemoryIndex(client, fake)
    pooled.upsert(memories(8, 6))
    one_by_one = ChromaMemoryIndex(client, fake,
                                   ranking=RankingSettings(pool_min_namespaces=10_000))
    everywhere = [f"workspace:ns-{i}" for i in range(8)]
    for query in QUERIES:
        assert hits(pooled, query, everywhere) == hits(one_by_one, query, everywhere)
        assert hits(pooled, query, everywhere[2:6]) == hits(one_by_one, query, everywhere[2:6])
        assert hits(pooled, query, everywhere, [Kind.DECISION, Kind.FACT]) == hits(
            one_by_one, query, everywhere, [Kind.DECISION, Kind.FACT])
    assert pooled._partitions.pool.built  # noqa: SLF001
    assert not one_by_one._partitions.pool.built  # noqa: SLF001
    pooled.close()
    one_by_one.close()


def test_the_pool_follows_writes(client: Any) -> None:
    index = ChromaMemoryIndex(client, FakeEmbedder())
    index.upsert(memories(4, 3))
    everywhere = [f"workspace:ns-{i}" for i in range(4)]
    index.search("pnpm", everywhere)  # builds the pool
    index.upsert([IndexedMemory("new", "workspace:ns-2", Kind.FACT, "zebra crossing rules")])
    assert hits(index, "zebra crossing", everywhere)[0][0] == "new"
    index.upsert([IndexedMemory("new", "workspace:ns-2", Kind.FACT, "giraffe feeding times")])
    assert hits(index, "giraffe feeding", everywhere)[0][0] == "new"
    assert "new" not in [m for m, _ in hits(index, "zebra crossing", everywhere)][:1]
    index.remove("workspace:ns-2", ["new"])
    assert "new" not in {m for m, _ in hits(index, "giraffe feeding", everywhere)}
    index.drop_namespace("workspace:ns-1")
    assert not any(m.startswith("m1-") for m, _ in hits(index, "note", everywhere))
    index.upsert([IndexedMemory("fresh", "workspace:ns-9", Kind.EVENT, "okapi sighting")])
    assert hits(index, "okapi", [*everywhere, "workspace:ns-9"])[0][0] == "fresh"
    index.close()


def test_a_namespace_that_outgrows_memory_leaves_the_pool(client: Any) -> None:
    index = ChromaMemoryIndex(client, FakeEmbedder(), ranking=RankingSettings(mirror_max=5))
    index.upsert(memories(3, 3))
    everywhere = [f"workspace:ns-{i}" for i in range(3)]
    index.search("pnpm", everywhere)
    index.upsert([IndexedMemory(f"big{i}", "workspace:ns-0", Kind.FACT, f"bulk {i} wombat")
                  for i in range(6)])  # ns-0 is on HNSW now
    assert len(index._partitions.pool) == 6  # noqa: SLF001 - ns-1 and ns-2 only
    assert hits(index, "wombat", everywhere)[0][0].startswith("big")
    index.close()


def unit(rows: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_projected_rows_are_reranked_exactly() -> None:
    """Past `exact_max` rows the pool scans projected rows, then reranks exactly."""
    vectors = unit(300, 32, 1)
    pool = Pool(32, exact_max=100, reduced=8, rerank=300)
    pool.build((i % 3, f"r{i}", Kind.FACT, vectors[i]) for i in range(300))
    assert not pool.stale()
    q = unit(1, 32, 2)[0]

    def exact(wanted: Mapping[int, list[str]]) -> list[tuple[int, str, float]]:
        return [(code, i, float(vectors[int(i[1:])] @ q))
                for code, ids in wanted.items() for i in ids]

    got = pool.search(q, {0, 1, 2}, None, 5, exact)
    want = np.argsort(-(vectors @ q))[:5]
    assert [m for _, m, _ in got] == [f"r{i}" for i in want]
    only = pool.search(q, {1}, None, 5, exact)
    assert {c for c, _, _ in only} == {1}
    for i in range(300, 700):  # doubled since the fit: due for a refit
        pool.set(0, f"r{i}", unit(1, 32, i)[0], Kind.FACT)
    assert pool.stale()
