"""Recall latency at 1k / 10k / 100k memories, and HNSW recall@10 against exact search.

The corpus is real text with real MiniLM vectors: the sentences of the LoCoMo dev file (turns,
observations, summaries), then pairs of them joined, until there are enough distinct texts.
Vectors are computed once and cached in bench/.cache/ (100k take ~15-20 min on 2 busy cores:
run `--embed-only` in the background first). Queries are LoCoMo questions; every recall is
timed end to end (query embedding included; the query cache is off).

Run: `.venv/bin/python -m bench.recall_latency [--quick] [--embed-only] [--sizes 1000 10000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.common import (
    CACHE,
    LOCOMO_DEV,
    CachedEmbedder,
    load_locomo,
    percentile,
    table,
    write_result,
)
from memvet.embeddings.chroma import HnswSettings, make_chroma_client
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.embeddings.onnx import OnnxEmbedder
from memvet.embeddings.pool import Pool
from memvet.embeddings.search import RankingSettings
from memvet.memory.kinds import Kind
from memvet.memory.ports import IndexedMemory

# a skewed, plausible mix: many facts and events, few decisions and postmortems
KIND_MIX = [Kind.FACT] * 8 + [Kind.EVENT] * 4 + [Kind.PREFERENCE] * 3 + [Kind.PATTERN] * 3
KIND_MIX += [Kind.DECISION] * 1 + [Kind.POSTMORTEM] * 1
N_QUERIES = 200


def sentences(path: Path = LOCOMO_DEV) -> list[str]:
    """Distinct sentences (>= 4 words) of every text field of the LoCoMo file."""
    seen: dict[str, None] = {}

    def walk(node: object) -> None:
        if isinstance(node, str):
            for s in re.split(r"(?<=[.!?])\s+", node):
                s = s.strip()
                if len(s.split()) >= 4:
                    seen.setdefault(s, None)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key not in ("img_url", "dia_id", "evidence", "answer", "category"):
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(path.read_text()))
    return list(seen)


def corpus(size: int) -> list[str]:
    """`size` distinct texts: sentences first, then deterministic pairs of sentences."""
    base = sentences()
    texts = base[:size]
    step = 1
    while len(texts) < size:
        step += 1
        for i, s in enumerate(base):
            if len(texts) >= size:
                break
            texts.append(f"{s} {base[(i * step + 17) % len(base)]}")
    return texts


def embed_corpus(texts: Sequence[str], embedder: CachedEmbedder) -> np.ndarray:
    """Vectors for texts, embedded in chunks that are saved as they finish (resumable)."""
    chunk = 2000
    out: list[list[float]] = []
    t0 = time.perf_counter()
    for start in range(0, len(texts), chunk):
        out.extend(embedder.embed(list(texts[start : start + chunk])))
        embedder.save()
        done = start + chunk
        if done % 10_000 == 0:
            print(f"  embedded {done}/{len(texts)} in {time.perf_counter() - t0:.0f}s", flush=True)
    return np.asarray(out, dtype=np.float32)


def timed(fn: object, queries: Sequence[str]) -> tuple[float, float]:
    """p50 and p95 milliseconds of fn(query) over the queries (after two warm-up calls)."""
    for q in queries[:2]:
        fn(q)  # type: ignore[operator]
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)  # type: ignore[operator]
        times.append((time.perf_counter() - t) * 1000)
    return percentile(times, 50), percentile(times, 95)


class _Precomputed:
    """An embedder that serves the cached corpus vectors (so building the index is cheap)."""

    def __init__(self, inner: CachedEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed(texts)


def run_size(
    size: int,
    texts: list[str],
    vectors: np.ndarray,
    queries: list[str],
    cached: CachedEmbedder,
    live: OnnxEmbedder,
) -> tuple[list[list[object]], list[list[object]], tuple[float, float, float, float]]:
    """Latency rows, HNSW recall rows, and (p50, p95) of all-namespace recall over 50
    namespaces and over one, timed side by side (query by query, alternating)."""
    ids = [f"m{i}" for i in range(size)]
    kinds = [KIND_MIX[(i * 7) % len(KIND_MIX)] for i in range(size)]
    rows: list[list[object]] = []
    recall_rows: list[list[object]] = []
    qvecs = np.asarray(live.embed(queries), dtype=np.float32)
    opened: dict[int, tuple[ChromaMemoryIndex, list[str]]] = {}
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        for layout in ("1 namespace", "50 namespaces"):
            n_ns = 1 if layout == "1 namespace" else 50
            nss = [f"workspace:bench-{i % n_ns}" for i in range(size)]
            client = make_chroma_client(path=Path(tmp) / f"{size}-{n_ns}")
            builder = ChromaMemoryIndex(client, _Precomputed(cached))
            t0 = time.perf_counter()
            mems = [IndexedMemory(ids[i], nss[i], kinds[i], texts[i]) for i in range(size)]
            for start in range(0, size, 5000):
                builder.upsert(mems[start : start + 5000])
            build_s = time.perf_counter() - t0
            builder.close()
            t0 = time.perf_counter()
            index = ChromaMemoryIndex(client, live, query_cache_size=0)
            open_s = time.perf_counter() - t0
            all_ns = sorted(set(nss))
            opened[n_ns] = (index, all_ns)
            cases = [
                ("all", all_ns, None, index),
                ("all, kind=decision (5%)", all_ns, [Kind.DECISION], index),
                ("all, kind=fact (40%)", all_ns, [Kind.FACT], index),
            ]
            if n_ns > 1:
                one_by_one = ChromaMemoryIndex(client, live, query_cache_size=0,
                                               ranking=RankingSettings(pool_min_namespaces=10**6))
                cases.append(("all, namespace by namespace (no pool)", all_ns, None, one_by_one))
                cases.append(("one of the 50", [all_ns[0]], None, index))
            for label, namespaces, kf, ix in cases:
                p50, p95 = timed(
                    lambda q, ix=ix, ns=namespaces, k=kf: ix.search(q, ns, kinds=k, limit=10),
                    queries,
                )
                rows.append([size, layout, label, p50, p95, f"{build_s:.0f}s / {open_s:.1f}s"])
            if n_ns > 1:
                one_by_one.close()
        head = head_to_head(opened, queries)
        for index, _ in opened.values():
            index.close()
        recall_rows = hnsw_recall(size, vectors[:size], qvecs, Path(tmp) / f"hnsw-{size}")
    return rows, recall_rows, head


def head_to_head(
    opened: dict[int, tuple[ChromaMemoryIndex, list[str]]], queries: list[str]
) -> tuple[float, float, float, float]:
    """(p50, p95) over 50 namespaces, then over one, each query asked of both in turn."""
    many, one = opened[50], opened[1]
    for q in queries[:3]:
        many[0].search(q, many[1], limit=10)
        one[0].search(q, one[1], limit=10)
    t_many, t_one = [], []
    for q in queries:
        for (index, nss), out in ((many, t_many), (one, t_one)):
            t = time.perf_counter()
            index.search(q, nss, limit=10)
            out.append((time.perf_counter() - t) * 1000)
    return (percentile(t_many, 50), percentile(t_many, 95), percentile(t_one, 50),
            percentile(t_one, 95))


def pool_recall(size: int, vectors: np.ndarray, qvecs: np.ndarray) -> list[list[object]]:
    """The pool's projected scan + exact rerank against exact search, on the real vectors in
    50 namespaces (what recall over the 50 uses past `pool_exact_max` rows)."""
    out: list[list[object]] = []
    exact_all = qvecs @ vectors.T
    for reduced, rerank in ((64, 200), (96, 200), (96, 400), (128, 200)):
        pool = Pool(vectors.shape[1], exact_max=0, reduced=reduced, rerank=rerank)  # projected
        pool.build((i % 50, str(i), Kind.FACT, vectors[i]) for i in range(size))

        def exact(wanted: dict[int, list[str]], qi: int = 0) -> list[tuple[int, str, float]]:
            return [(c, i, float(exact_all[qi, int(i)])) for c, ids in wanted.items() for i in ids]

        r10, r50, times = [], [], []
        for qi in range(len(qvecs)):
            truth = np.argsort(-exact_all[qi])[:50]
            t = time.perf_counter()
            got = pool.search(qvecs[qi], set(range(50)), None, 50,
                              lambda w, qi=qi: exact(w, qi))
            times.append((time.perf_counter() - t) * 1000)
            ids = [int(m) for _, m, _ in got]
            r10.append(len(set(ids[:10]) & set(truth[:10].tolist())) / 10)
            r50.append(len(set(ids) & set(truth.tolist())) / 50)
        out.append([size, reduced, rerank, float(np.mean(r10)), float(np.mean(r50)),
                    percentile(times, 50), percentile(times, 95)])
    return out


HNSW_GRID = [(16, 100, 10), (16, 100, 40), (16, 100, 100), (32, 200, 100)]


def hnsw_recall(
    size: int, vectors: np.ndarray, qvecs: np.ndarray, path: Path
) -> list[list[object]]:
    """Chroma's HNSW top-10 vs exact top-10 for each (M, ef_construction, ef_search).

    Each setting gets a collection of its own: ef_search is read when a collection's index is
    loaded, so changing it on a live collection does not show in the same process.
    """
    client = make_chroma_client(path=path)
    exact = np.argsort(-(qvecs @ vectors.T), axis=1)[:, :10]
    out: list[list[object]] = []
    for m, efc, ef in HNSW_GRID:
        config = HnswSettings(ef_search=ef, max_neighbors=m, ef_construction=efc)
        col = client.create_collection(
            f"hnsw-{m}-{efc}-{ef}", configuration=config.configuration(), embedding_function=None
        )
        t0 = time.perf_counter()
        for start in range(0, size, 5000):
            stop = min(start + 5000, size)
            col.add(ids=[str(i) for i in range(start, stop)], embeddings=vectors[start:stop])
        build_s = time.perf_counter() - t0
        got, times = [], []
        for qi in range(len(qvecs)):
            t = time.perf_counter()
            res = col.query(query_embeddings=qvecs[qi : qi + 1], n_results=10, include=[])
            times.append((time.perf_counter() - t) * 1000)
            got.append(len({int(i) for i in res["ids"][0]} & set(exact[qi].tolist())) / 10)
        out.append(
            [
                size,
                m,
                efc,
                ef,
                float(np.mean(got)),
                percentile(times, 50),
                percentile(times, 95),
                f"{build_s:.0f}s",
            ]
        )
        client.delete_collection(col.name)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Embed (cached), build, time recall, measure HNSW recall; print and write tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1k and 10k only")
    parser.add_argument("--embed-only", action="store_true", help="fill the vector cache, stop")
    parser.add_argument("--sizes", type=int, nargs="*")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([1000, 10_000] if args.quick else [1000, 10_000, 100_000])
    live = OnnxEmbedder(cache_dir=CACHE / "onnx")
    cached = CachedEmbedder(live, "latency-fp32")
    texts = corpus(max(sizes))
    vectors = embed_corpus(texts, cached)
    if args.embed_only:
        return
    queries = [q.question for q in load_locomo().queries[:N_QUERIES]]
    t = [timed(lambda q: live.embed([q]), queries)]
    rows, recall_rows = [], []
    head = (0.0, 0.0, 0.0, 0.0)
    for size in sizes:
        r, rr, head = run_size(size, texts[:size], vectors, queries, cached, live)
        rows += r
        recall_rows += rr
    biggest = max(sizes)
    qvecs = np.asarray(live.embed(queries), dtype=np.float32)
    pool_rows = pool_recall(biggest, vectors[:biggest], qvecs)
    h = HnswSettings()
    r = RankingSettings()
    text = "\n\n".join(
        [
            f"Sizes {', '.join(map(str, sizes))}; in-process, embedded Chroma, ONNX query "
            f"embedding; {N_QUERIES} LoCoMo questions, limit 10, query cache off; "
            f"HNSW M={h.max_neighbors}, "
            f"ef_construction={h.ef_construction}, ef_search={h.ef_search}. The query "
            f"embedding alone: p50 {t[0][0]:.1f} ms, p95 {t[0][1]:.1f} ms. "
            "Build = upsert with precomputed vectors; open = reopening the index "
            f"(BM25 rebuilt from Chroma). Namespaces up to {r.mirror_max:,} memories are held "
            f"in memory; {r.pool_min_namespaces} or more of them searched together are one scan "
            "of the pool (embeddings/pool.py). Load average at the end: "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a shared machine: "
            "latencies scale with it).",
            table(["memories", "layout", "recall over", "p50 ms", "p95 ms", "build / open"], rows),
            f"Side by side at {biggest:,} memories (each question asked of both layouts in "
            f"turn): recall over all 50 namespaces p50 {head[0]:.1f} ms, p95 {head[1]:.1f} ms; "
            f"over one namespace holding them all p50 {head[2]:.1f} ms, p95 {head[3]:.1f} ms: "
            f"**p95 {head[1] / head[3]:.2f}×** one namespace (target ≤ 1.5×).",
            "HNSW recall@10 against exact search (Chroma alone, real MiniLM vectors of the "
            "corpus, the LoCoMo questions as queries; namespaces up to "
            f"{r.mirror_max} memories are searched exactly in memory instead):",
            table(
                [
                    "memories",
                    "M",
                    "ef_construction",
                    "ef_search",
                    "recall@10",
                    "query p50 ms",
                    "query p95 ms",
                    "build",
                ],
                recall_rows,
            ),
            f"The pool past {r.pool_exact_max:,} rows: a scan of the rows projected on their "
            "first principal components, then the best `rerank` by exact cosine; against "
            f"exact search over the same {biggest:,} real vectors in 50 namespaces (the "
            "default is 96 components, 200 reranked):",
            table(["memories", "components", "rerank", "recall@10", "recall@50",
                   "p50 ms", "p95 ms"], pool_rows),
        ]
    )
    write_result("recall_latency", text)


if __name__ == "__main__":
    main()
