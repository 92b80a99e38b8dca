"""The recall strategy across namespaces: dense and lexical candidates, fused, kind-weighted.

For each partition searched:
- dense candidates: an exact scan of its in-memory vectors (`Mirror`) when it is small (when
  several small namespaces are searched together, one scan of the `pool.Pool` that holds
  all their vectors, and the best of them all rather than the best of each); else
  Chroma's HNSW, or, under a kind filter, an exact scan of that kind's vectors when the filter
  is narrow and an over-fetch from HNSW kept to the kinds when it is broad (Chroma's `where`
  would make HNSW walk the whole graph);
- lexical candidates: BM25 (`lexical.BM25Index`), each given its exact cosine, so every
  candidate has both parts.
Then all namespaces' candidates are fused together (`fusion.convex_fusion`), multiplied by their
kind's weight, and the top `limit` become `SearchHit`s.

Partitions held in memory are searched inline (a few numpy calls); those on HNSW wait on Chroma,
so several of them are searched concurrently in a small thread pool.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from memvet.embeddings.fusion import convex_fusion
from memvet.embeddings.lexical import tokenize
from memvet.embeddings.mirror import KIND_CODES
from memvet.embeddings.partitions import Doc, Partition
from memvet.embeddings.pool import Pool
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind
from memvet.memory.ports import SearchHit

Candidates = list[tuple[str, float]]  # (memory_id, score) from one partition


@dataclass(frozen=True)
class RankingSettings:
    """How recall fuses its two halves; defaults from bench/locomo_recall.py."""

    alpha: float = 0.5  # weight of cosine / max cosine; 1 - alpha for BM25 / max BM25
    dense_candidates: int = 50  # HNSW neighbours fetched per namespace before fusion
    lexical_candidates: int = 50  # BM25 matches taken per namespace before fusion
    mirror_max: int = 20_000  # namespaces up to this size keep their vectors in memory: exact scan
    exact_kind_max: int = 5000  # a kind filter selecting at most this many vectors: exact scan
    exact_kind_fraction: float = 0.2  # ... or at most this share of the namespace
    pool_min_namespaces: int = 3  # this many in-memory namespaces searched together: one scan
    pool_exact_max: int = 20_000  # past this many pooled rows: projected scan, exact rerank


def kind_weight_table(kind_weights: Mapping[Kind, float] | None) -> Mapping[Kind, float]:
    """The weights recall applies: the core's defaults, overridden by what the caller handed."""
    return {**DEFAULT_KIND_WEIGHTS, **kind_weights} if kind_weights else DEFAULT_KIND_WEIGHTS


_blas_limited = False


def single_threaded_blas() -> None:
    """numpy's BLAS (OpenBLAS) on one thread in this process, once.

    The exact scans are matrix-vector products of a few MB: on threads they wait for each
    other. Measured on the 2-core benchmark machine with other work running: a 2,000 x 384
    product took 8 ms on OpenBLAS's 2 threads and 0.09 ms on one (100k rows: 16 vs 10 ms).
    Concurrent recalls use the cores instead. A no-op where threadpoolctl is missing."""
    global _blas_limited
    if _blas_limited:
        return
    _blas_limited = True
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - installed with the package
        return
    ThreadpoolController().select(user_api="blas", internal_api="openblas").limit(limits=1)


class HybridSearch:
    """Searches partitions for one query vector and text; owns the pool HNSW searches run in."""

    def __init__(self, ranking: RankingSettings, *, lexical: bool, max_workers: int) -> None:
        single_threaded_blas()
        self.ranking = ranking
        self.lexical = lexical
        self._max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def search(
        self,
        parts: Sequence[Partition],
        query: str,
        qvec: np.ndarray,
        *,
        kinds: frozenset[Kind] | None,
        limit: int,
        kind_weights: Mapping[Kind, float] | None,
        pool: Pool | None = None,
    ) -> list[SearchHit]:
        """Top `limit` memories of these (distinct, non-empty) partitions, fused, kind-weighted.

        With a `pool`, the in-memory partitions' dense candidates come from one scan of it."""
        weights = kind_weight_table(kind_weights)
        qtokens = tokenize(query) if self.lexical else []

        def per_part(candidates: int) -> int:
            # the fused top `limit` over many namespaces needs fewer candidates from each
            return max(limit, candidates // len(parts), 2 * limit if len(parts) > 1 else 0)

        def one(part: Partition) -> tuple[Partition, Candidates, Candidates]:
            dense_hits = self._dense(part, qvec, kinds, per_part(self.ranking.dense_candidates))
            lexical_hits = self._lexical(
                part, qtokens, kinds, per_part(self.ranking.lexical_candidates)
            )
            seen = {i for i, _ in dense_hits}
            missing = [i for i, _ in lexical_hits if i not in seen]
            if missing:  # give lexical-only candidates their exact cosine
                dense_hits = dense_hits + part.cosines(qvec, missing)
            return part, dense_hits, lexical_hits

        pooled: list[tuple[Partition, Candidates, Candidates]] = []
        if pool is not None:
            pooled = self._pooled(pool, [p for p in parts if p.mirror is not None], qtokens,
                                  qvec, kinds, limit)
            parts = [p for p in parts if p.mirror is None]

        # in-memory partitions are a few numpy calls: threads would only add overhead; the
        # ones on HNSW wait on Chroma, so they go to the pool and run concurrently
        remote = [p for p in parts if p.mirror is None]
        futures = [self._executor().submit(one, p) for p in remote] if len(remote) > 1 else []
        results = [one(p) for p in parts if p.mirror is not None or len(remote) == 1]
        results += [f.result() for f in futures]
        results += pooled
        parts = [r[0] for r in results]

        dense: dict[tuple[str, str], float] = {}
        lexical: dict[tuple[str, str], float] = {}
        for part, d_hits, l_hits in results:
            dense.update(((part.namespace, i), s) for i, s in d_hits)
            lexical.update(((part.namespace, i), s) for i, s in l_hits)
        fused = convex_fusion(dense, lexical, alpha=self.ranking.alpha if lexical else 1.0)
        by_ns = {p.namespace: p for p in parts}
        scored: list[tuple[float, float, str, str, Doc, float, float]] = []
        for (ns, memory_id), f in fused.items():
            doc = by_ns[ns].docs.get(memory_id)
            if doc is None:  # removed while we searched
                continue
            w = float(weights.get(doc.kind, 1.0))
            d = dense.get((ns, memory_id), 0.0)
            scored.append((f * w, d, ns, memory_id, doc, f, w))
        # only the winners become SearchHits: with many namespaces there are thousands of
        # candidates and building an object for each costs more than the search itself
        top = heapq.nsmallest(limit, scored, key=lambda t: (-t[0], -t[1], t[2], t[3]))
        return [
            SearchHit(
                memory_id=memory_id,
                namespace=ns,
                kind=doc.kind,
                content=doc.content,
                score=score,
                dense=dense.get((ns, memory_id)),
                lexical=lexical.get((ns, memory_id)),
                fused=f,
                kind_weight=w,
            )
            for score, _, ns, memory_id, doc, f, w in top
        ]

    def _pooled(
        self,
        pool: Pool,
        parts: Sequence[Partition],
        qtokens: list[str],
        qvec: np.ndarray,
        kinds: frozenset[Kind] | None,
        limit: int,
    ) -> list[tuple[Partition, Candidates, Candidates]]:
        """Many in-memory namespaces searched as one: the best `dense_candidates` of them all
        from one scan of the pool, and the best `lexical_candidates` of their BM25 matches,
        as if they were one namespace; each candidate with its exact cosine."""
        by_code = {p.code: p for p in parts}
        dense: dict[Partition, Candidates] = {p: [] for p in parts}
        n_dense = max(self.ranking.dense_candidates, 2 * limit)
        for code, memory_id, score in pool.search(qvec, by_code, kinds, n_dense,
                                                  self._cosines(by_code, qvec)):
            dense[by_code[code]].append((memory_id, score))
        lexical: dict[Partition, Candidates] = {p: [] for p in parts}
        if qtokens:
            found = [(p, i, s) for p in parts for i, s in self._lexical(p, qtokens, kinds, limit)]
            n_lexical = max(self.ranking.lexical_candidates, 2 * limit)
            if len(found) > n_lexical:
                found = heapq.nlargest(n_lexical, found, key=lambda t: t[2])
            missing: dict[int, list[str]] = {}
            for part, memory_id, score in found:
                lexical[part].append((memory_id, score))
                missing.setdefault(part.code, []).append(memory_id)
            for part in parts:  # lexical-only candidates get their exact cosine
                seen = {i for i, _ in dense[part]}
                missing[part.code] = [i for i in missing.get(part.code, []) if i not in seen]
            for code, memory_id, score in self._cosines(by_code, qvec)(missing):
                dense[by_code[code]].append((memory_id, score))
        return [(p, dense[p], lexical[p]) for p in parts if dense[p] or lexical[p]]

    @staticmethod
    def _cosines(
        by_code: Mapping[int, Partition], qvec: np.ndarray
    ) -> Callable[[Mapping[int, list[str]]], list[tuple[int, str, float]]]:
        """Exact cosines of (namespace code -> ids), from the mirrors, in one product."""

        def exact(wanted: Mapping[int, list[str]]) -> list[tuple[int, str, float]]:
            keys: list[tuple[int, str]] = []
            rows: list[np.ndarray] = []
            for code, ids in wanted.items():
                got_ids, matrix = by_code[code].mirror_rows(ids)
                keys.extend((code, i) for i in got_ids)
                rows.append(matrix)
            if not keys:
                return []
            sims = np.vstack(rows) @ qvec
            return [(c, i, float(v)) for (c, i), v in zip(keys, sims, strict=True)]

        return exact

    def close(self) -> None:
        """Stop the worker threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(
                        max_workers=self._max_workers, thread_name_prefix="memvet-recall"
                    )
        return self._pool

    def _lexical(
        self, part: Partition, tokens: list[str], kinds: frozenset[Kind] | None, n: int
    ) -> Candidates:
        if not tokens:
            return []
        groups = {KIND_CODES[k] for k in kinds} if kinds is not None else None
        hits = part.bm25.search(tokens, limit=n, groups=groups)
        return [(h.doc_id, h.score) for h in hits]

    def _dense(
        self, part: Partition, qvec: np.ndarray, kinds: frozenset[Kind] | None, n: int
    ) -> Candidates:
        with part.lock:  # a concurrent upsert may grow or reorder the rows
            if part.mirror is not None:
                return part.mirror.search(qvec, n, kinds)
        total = len(part.docs)
        if kinds is None:
            return part.nearest(qvec, min(n, total))
        selected = sum(part.kind_counts[k] for k in kinds)
        if selected == 0:
            return []
        want = min(n, selected)
        if (
            selected <= self.ranking.exact_kind_max
            or selected <= total * self.ranking.exact_kind_fraction
        ):
            return _exact(part, qvec, kinds, want)
        # a broad filter: over-fetch from HNSW and keep the selected kinds (no Chroma `where`)
        fetch = min(total, math.ceil(want * total / selected * 1.5) + 10)
        kept = [
            (i, s)
            for i, s in part.nearest(qvec, fetch)
            if (d := part.docs.get(i)) and d.kind in kinds
        ]
        if len(kept) >= want:
            return kept[:want]
        return _exact(part, qvec, kinds, want)


def _exact(part: Partition, qvec: np.ndarray, kinds: Iterable[Kind], n: int) -> Candidates:
    """The `n` most similar vectors of these kinds, by a scan of each kind's vectors."""
    scored: Candidates = []
    for kind in kinds:
        ids, matrix = part.kind_vectors(kind)
        if not ids:
            continue
        sims = matrix @ qvec
        top = (
            np.argpartition(-sims, min(n, len(ids)) - 1)[:n]
            if len(ids) > n
            else np.arange(len(ids))
        )
        scored.extend((ids[j], float(sims[j])) for j in top)
    scored.sort(key=lambda t: -t[1])
    return scored[:n]
