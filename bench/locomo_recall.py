"""Recall quality on LoCoMo: dense only, lexical only, RRF and the shipped ranking.

Every dialog turn is an approved memory in `workspace:locomo-<sample_id>`; every QA item of
categories 1-4 with evidence is a query narrowed to its conversation's namespace. Reports
recall@5, recall@10 (share of a question's evidence turns in the top k) and MRR (of the first
evidence turn). Run: `.venv/bin/python -m bench.locomo_recall [--data PATH]`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.common import (
    CACHE,
    LOCOMO_DEV,
    CachedEmbedder,
    Locomo,
    Query,
    load_locomo,
    mean,
    percentile,
    table,
    write_result,
)
from memvet.embeddings.chroma import make_chroma_client
from memvet.embeddings.fusion import rrf_fusion
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.embeddings.lexical import BM25Index, tokenize
from memvet.embeddings.model import SentenceTransformerEmbedder
from memvet.embeddings.onnx import OnnxEmbedder
from memvet.embeddings.search import RankingSettings
from memvet.memory.kinds import Kind
from memvet.memory.ports import IndexedMemory

Ranker = Callable[[Query, int], list[str]]


def score(queries: Sequence[Query], rank: Ranker) -> dict[str, float]:
    """recall@5, recall@10 and MRR of the evidence turns over the queries."""
    r5, r10, rr = [], [], []
    for q in queries:
        got = rank(q, 10)
        ev = set(q.evidence)
        r5.append(len(ev & set(got[:5])) / len(ev))
        r10.append(len(ev & set(got[:10])) / len(ev))
        rr.append(next((1.0 / (i + 1) for i, m in enumerate(got) if m in ev), 0.0))
    return {"recall@5": mean(r5), "recall@10": mean(r10), "MRR": mean(rr)}


def build_index(data: Locomo, embedder: object, path: Path, **kwargs: object) -> ChromaMemoryIndex:
    """An index holding every turn as a `fact` memory (kind weights then play no part)."""
    index = ChromaMemoryIndex(make_chroma_client(path=path), embedder, **kwargs)  # type: ignore[arg-type]
    index.upsert([IndexedMemory(t.memory_id, t.namespace, Kind.FACT, t.text) for t in data.turns])
    return index


def rankers(
    data: Locomo, index: ChromaMemoryIndex, dense_index: ChromaMemoryIndex
) -> dict[str, Ranker]:
    """The methods compared: dense only, BM25 only, RRF of the two, the shipped ranking."""
    bm25: dict[str, BM25Index] = {}
    for t in data.turns:
        bm25.setdefault(t.namespace, BM25Index()).add(t.memory_id, t.text)

    def dense(q: Query, k: int) -> list[str]:
        return [h.memory_id for h in dense_index.search(q.question, [q.namespace], limit=k)]

    def lexical(q: Query, k: int) -> list[str]:
        return [h.doc_id for h in bm25[q.namespace].search(tokenize(q.question), limit=k)]

    def rrf(q: Query, k: int) -> list[str]:
        d = {h.memory_id: h.score for h in dense_index.search(q.question, [q.namespace], limit=50)}
        lx = {h.doc_id: h.score for h in bm25[q.namespace].search(tokenize(q.question), limit=50)}
        fused = rrf_fusion(d, lx)
        return sorted(fused, key=lambda m: -fused[m])[:k]

    def shipped(q: Query, k: int) -> list[str]:
        return [h.memory_id for h in index.search(q.question, [q.namespace], limit=k)]

    return {
        "dense only (MiniLM, cosine)": dense,
        "lexical only (BM25)": lexical,
        "RRF (dense + BM25, k=60)": rrf,
        "shipped (convex fusion, max-scaled)": shipped,
    }


class _QueryOnly:
    """Bench-only: int8 query vectors searched against fp32 corpus vectors (mixed spaces)."""

    def __init__(self, fp32: OnnxEmbedder, int8: OnnxEmbedder) -> None:
        self.model_id, self.dimension, self._int8 = fp32.model_id, fp32.dimension, int8

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._int8.embed(texts)


def embedder_variants(data: Locomo, tmp: Path, fp32_cached: CachedEmbedder) -> list[list[object]]:
    """Query latency, agreement with torch and LoCoMo recall@5 for each query embedder."""
    torch_e = SentenceTransformerEmbedder()
    fp32 = OnnxEmbedder(cache_dir=CACHE / "onnx")
    int8 = OnnxEmbedder(cache_dir=CACHE / "onnx", quantize=True)
    int8_cached = CachedEmbedder(int8, "minilm-int8")
    questions = [q.question for q in data.queries]
    reference = np.asarray(torch_e.embed(questions[:300]), dtype=np.float32)
    variants: list[tuple[str, object, object]] = [
        ("sentence-transformers (torch)", torch_e, fp32_cached),
        ("ONNX fp32 (shipped)", fp32, fp32_cached),
        ("ONNX int8, corpus and queries", int8, int8_cached),
        ("ONNX int8 queries, fp32 corpus", _QueryOnly(fp32, int8), fp32_cached),
    ]
    rows: list[list[object]] = []
    for name, query_embedder, corpus_embedder in variants:
        query_embedder.embed(questions[:2])  # type: ignore[attr-defined]  # load, warm up
        times = []
        for q in questions[:200]:
            t = time.perf_counter()
            query_embedder.embed([q])  # type: ignore[attr-defined]
            times.append((time.perf_counter() - t) * 1000)
        vecs = np.asarray(query_embedder.embed(questions[:300]), dtype=np.float32)  # type: ignore[attr-defined]
        agreement = float((vecs * reference).sum(axis=1).mean())
        path = tmp / f"variant-{len(rows)}"
        build_index(data, corpus_embedder, path).close()
        if isinstance(corpus_embedder, CachedEmbedder):
            corpus_embedder.save()
        index = ChromaMemoryIndex(make_chroma_client(path=path), query_embedder)  # type: ignore[arg-type]
        dense = ChromaMemoryIndex(make_chroma_client(path=path), query_embedder, lexical=False)  # type: ignore[arg-type]
        s_dense = score(data.queries, lambda q, k, ix=dense: _ids(ix, q, k))
        s_shipped = score(data.queries, lambda q, k, ix=index: _ids(ix, q, k))
        rows.append(
            [
                name,
                percentile(times, 50),
                percentile(times, 95),
                agreement,
                s_dense["recall@5"],
                s_shipped["recall@5"],
            ]
        )
        index.close()
        dense.close()
    return rows


def _ids(index: ChromaMemoryIndex, q: Query, k: int) -> list[str]:
    return [h.memory_id for h in index.search(q.question, [q.namespace], limit=k)]


def main(argv: Sequence[str] | None = None) -> None:
    """Build the index from LoCoMo, score each method, print and write the tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV)
    args = parser.parse_args(argv)
    data = load_locomo(args.data)
    embedder = CachedEmbedder(OnnxEmbedder(cache_dir=CACHE / "onnx"), "minilm-fp32")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        index = build_index(data, embedder, Path(tmp) / "hybrid")
        dense_index = build_index(data, embedder, Path(tmp) / "dense", lexical=False)
        embedder.save()
        build_s = time.perf_counter() - t0
        rows = []
        for name, rank in rankers(data, index, dense_index).items():
            s = score(data.queries, rank)
            rows.append([name, s["recall@5"], s["recall@10"], s["MRR"]])
        sweep = []
        for alpha in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            variant = ChromaMemoryIndex(
                make_chroma_client(path=Path(tmp) / "hybrid"),
                embedder,
                ranking=RankingSettings(alpha=alpha),
            )
            s = score(data.queries, lambda q, k, ix=variant: _ids(ix, q, k))
            sweep.append([alpha, s["recall@5"], s["recall@10"], s["MRR"]])
            variant.close()
        by_cat = []
        shipped = rankers(data, index, dense_index)["shipped (convex fusion, max-scaled)"]
        for cat, label in (
            (1, "multi-hop"),
            (2, "temporal"),
            (3, "open-domain"),
            (4, "single-hop"),
        ):
            qs = [q for q in data.queries if q.category == cat]
            s = score(qs, shipped)
            by_cat.append([f"{cat} {label}", len(qs), s["recall@5"], s["recall@10"], s["MRR"]])
        index.close()
        dense_index.close()
        variants = embedder_variants(data, Path(tmp), embedder)
    r = RankingSettings()
    text = "\n\n".join(
        [
            f"{len(data.turns)} turns in {len({t.namespace for t in data.turns})} namespaces, "
            f"{len(data.queries)} queries (categories 1-4 with evidence). Evidence ids: "
            f"{data.evidence_total} read, {data.evidence_normalised} normalised, "
            f"{data.evidence_dropped} dropped (no such turn), "
            f"{data.queries_without_evidence} queries left without evidence and skipped. "
            f"Shipped ranking: alpha={r.alpha}, dense candidates {r.dense_candidates}, "
            f"lexical candidates {r.lexical_candidates}. Index build {build_s:.1f} s.",
            table(["method", "recall@5", "recall@10", "MRR"], rows),
            "Fusion weight alpha (share of the max-scaled cosine; the rest is BM25 / max BM25):",
            table(["alpha", "recall@5", "recall@10", "MRR"], sweep),
            "Shipped ranking by category:",
            table(["category", "queries", "recall@5", "recall@10", "MRR"], by_cat),
            "Query embedders (one question at a time; agreement = mean cosine with torch over "
            "300 questions):",
            table(
                [
                    "query embedder",
                    "embed p50 ms",
                    "embed p95 ms",
                    "cosine vs torch",
                    "dense recall@5",
                    "shipped recall@5",
                ],
                variants,
            ),
        ]
    )
    write_result("locomo_recall", text)


if __name__ == "__main__":
    main()
