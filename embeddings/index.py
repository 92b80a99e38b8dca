"""The recall index: one Chroma collection per namespace, dense + BM25 fusion, kind weights.

Only what `upsert` was handed (approved memories) is ever searchable. Each namespace keeps, in
memory, its ids -> (kind, content, content hash) and a BM25 index, rebuilt from Chroma at open;
Chroma holds the vectors and answers the dense (HNSW) half of a query.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from memvet.embeddings.chroma import (
    COLLECTION_PREFIX,
    ExplicitEmbeddingFunction,
    collection_name,
    namespace_of,
)
from memvet.embeddings.fusion import convex_fusion
from memvet.embeddings.lexical import BM25Index, tokenize
from memvet.memory.errors import MemvetError
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind, parse_kind
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import Embedder, IndexedMemory, SearchHit, index_hash

META_NAMESPACE = "memvet_namespace"
META_MODEL = "memvet_model_id"
META_DIMENSION = "memvet_dimension"


class EmbeddingModelMismatch(MemvetError):
    """A collection holds vectors of another embedding model than the one configured."""

    code = "EMBEDDING_MODEL_MISMATCH"


def content_hash(kind: Kind | str, content: str) -> str:
    """The hash `snapshot()` reports for a memory (the core's `index_hash`): kind + content."""
    return index_hash(parse_kind(kind), content)


@dataclass(frozen=True)
class HnswSettings:
    """Chroma HNSW parameters, chosen by bench/recall_latency.py (recall@10 vs exact)."""

    ef_search: int = 100
    max_neighbors: int = 16
    ef_construction: int = 100

    def configuration(self) -> dict[str, Any]:
        """The `configuration=` Chroma takes when it creates a collection."""
        return {
            "hnsw": {
                "space": "cosine",
                "ef_search": self.ef_search,
                "max_neighbors": self.max_neighbors,
                "ef_construction": self.ef_construction,
            }
        }


@dataclass(frozen=True)
class RankingSettings:
    """How recall fuses its two halves; defaults from bench/locomo_recall.py."""

    alpha: float = 0.5  # weight of the (min-max scaled) cosine; 1 - alpha for BM25 / max BM25
    dense_candidates: int = 50  # HNSW neighbours fetched per namespace before fusion
    lexical_candidates: int = 50  # BM25 matches taken per namespace before fusion
    mirror_max: int = 20_000  # namespaces up to this size keep their vectors in memory: exact scan
    exact_kind_max: int = 5000  # a kind filter selecting at most this many vectors: exact scan
    exact_kind_fraction: float = 0.2  # ... or at most this share of the namespace


@dataclass
class _Doc:
    kind: Kind
    content: str
    hash: str


_KIND_CODES = {kind: code for code, kind in enumerate(Kind)}


class _Mirror:
    """A namespace's vectors in memory (float32 rows), for exact search of small namespaces.

    Below ~20k vectors one matrix-vector product (~1 ms at 20k x 384 here) beats a round trip
    through Chroma's HNSW, and gives exact rather than approximate neighbours.
    """

    def __init__(self, dimension: int) -> None:
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.matrix = np.zeros((64, dimension), dtype=np.float32)
        self.kinds = np.zeros(64, dtype=np.int16)

    def __len__(self) -> int:
        return len(self.ids)

    def set(self, memory_id: str, vector: np.ndarray, kind: Kind) -> None:
        row = self.row_of.get(memory_id)
        if row is None:
            row = len(self.ids)
            if row == len(self.matrix):
                self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
                self.kinds = np.concatenate([self.kinds, np.zeros_like(self.kinds)])
            self.ids.append(memory_id)
            self.row_of[memory_id] = row
        self.matrix[row] = vector
        self.kinds[row] = _KIND_CODES[kind]

    def remove(self, memory_id: str) -> None:
        row = self.row_of.pop(memory_id, None)
        if row is None:
            return
        last = len(self.ids) - 1
        if row != last:  # move the last row into the hole
            moved = self.ids[last]
            self.ids[row] = moved
            self.row_of[moved] = row
            self.matrix[row] = self.matrix[last]
            self.kinds[row] = self.kinds[last]
        self.ids.pop()

    def search(
        self, qvec: np.ndarray, n: int, kinds: frozenset[Kind] | None
    ) -> list[tuple[str, float]]:
        count = len(self.ids)
        sims = self.matrix[:count] @ qvec
        rows = np.arange(count)
        if kinds is not None:
            rows = rows[np.isin(self.kinds[:count], [_KIND_CODES[k] for k in kinds])]
            sims = sims[rows]
        if len(rows) > n:
            top = np.argpartition(-sims, n - 1)[:n]
            rows, sims = rows[top], sims[top]
        return [(self.ids[r], float(v)) for r, v in zip(rows, sims, strict=True)]

    def cosines(self, qvec: np.ndarray, memory_ids: list[str]) -> list[tuple[str, float]]:
        rows = [(i, self.row_of[i]) for i in memory_ids if i in self.row_of]
        if not rows:
            return []
        sims = self.matrix[[r for _, r in rows]] @ qvec
        return [(i, float(v)) for (i, _), v in zip(rows, sims, strict=True)]


class _Partition:
    """One namespace: its collection, documents, BM25 index, and vectors when small enough."""

    def __init__(self, namespace: str, collection: Any) -> None:
        self.namespace = namespace
        self.collection = collection
        self.docs: dict[str, _Doc] = {}
        self.bm25 = BM25Index()
        self.kind_counts: dict[Kind, int] = dict.fromkeys(Kind, 0)
        self.vectors: dict[Kind, tuple[list[str], np.ndarray]] = {}
        self.mirror: _Mirror | None = None
        self.lock = threading.RLock()

    def put(self, memory_id: str, doc: _Doc, vector: np.ndarray | None, *, lexical: bool) -> None:
        with self.lock:
            if self.mirror is not None:
                if vector is None:
                    self.mirror = None  # vectors not at hand: fall back to Chroma for good
                else:
                    self.mirror.set(memory_id, vector, doc.kind)
            old = self.docs.get(memory_id)
            if old is not None:
                self.kind_counts[old.kind] -= 1
                self.vectors.pop(old.kind, None)
            self.docs[memory_id] = doc
            self.kind_counts[doc.kind] += 1
            self.vectors.pop(doc.kind, None)
            if lexical:
                self.bm25.add(memory_id, doc.content, group=_KIND_CODES[doc.kind])

    def drop(self, memory_id: str) -> None:
        with self.lock:
            old = self.docs.pop(memory_id, None)
            if self.mirror is not None:
                self.mirror.remove(memory_id)
            if old is not None:
                self.kind_counts[old.kind] -= 1
                self.vectors.pop(old.kind, None)
                self.bm25.remove([memory_id])

    def kind_vectors(self, kind: Kind) -> tuple[list[str], np.ndarray]:
        """The vectors of one kind, fetched from Chroma once and kept until that kind changes."""
        with self.lock:
            cached = self.vectors.get(kind)
            if cached is not None:
                return cached
            ids = [i for i, d in self.docs.items() if d.kind == kind]
        rows: list[np.ndarray] = []
        got_ids: list[str] = []
        for start in range(0, len(ids), 2000):
            res = self.collection.get(ids=ids[start : start + 2000], include=["embeddings"])
            got_ids.extend(res["ids"])
            rows.extend(np.asarray(e, dtype=np.float32) for e in res["embeddings"])
        matrix = np.vstack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
        with self.lock:
            self.vectors[kind] = (got_ids, matrix)
        return got_ids, matrix


class ChromaMemoryIndex:
    """`MemoryIndex` over Chroma: namespace-partitioned, hybrid-ranked, model-checked."""

    def __init__(
        self,
        client: Any,
        embedder: Embedder,
        *,
        hnsw: HnswSettings | None = None,
        lexical: bool = True,
        ranking: RankingSettings | None = None,
        on_model_mismatch: Literal["raise", "rebuild"] = "raise",
        max_workers: int = 8,
        query_cache_size: int = 1024,
    ) -> None:
        self.client = client
        self.embedder = embedder
        self.hnsw = hnsw or HnswSettings()
        self.lexical = lexical
        self.ranking = ranking or RankingSettings()
        self._ef = ExplicitEmbeddingFunction(embedder)
        self._partitions: dict[str, _Partition] = {}
        self._lock = threading.RLock()
        self._pool: ThreadPoolExecutor | None = None
        self._max_workers = max_workers
        self._query_cache: OrderedDict[str, list[float]] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._open_existing(on_model_mismatch)

    # ------------------------------------------------------------------ opening
    def _open_existing(self, on_mismatch: str) -> None:
        mismatched: list[str] = []
        for col in self.client.list_collections():
            name = col if isinstance(col, str) else col.name
            namespace = namespace_of(name) if name.startswith(COLLECTION_PREFIX) else None
            if namespace is None:
                continue
            collection = self.client.get_collection(name, embedding_function=self._ef)
            meta = collection.metadata or {}
            if not self._same_model(meta):
                if on_mismatch == "rebuild":
                    self.client.delete_collection(name)
                    continue
                mismatched.append(
                    f"{namespace} ({meta.get(META_MODEL)}, dim {meta.get(META_DIMENSION)})"
                )
                continue
            self._partitions[namespace] = self._load_partition(namespace, collection)
        if mismatched:
            raise EmbeddingModelMismatch(
                f"the recall index holds vectors of another embedding model than "
                f"{self.embedder.model_id} (dim {self.embedder.dimension}): "
                + ", ".join(mismatched[:5])
                + "; run `memvet reindex` to rebuild it with the configured model"
            )

    def _same_model(self, meta: dict[str, Any]) -> bool:
        return meta.get(META_MODEL) == self.embedder.model_id and int(
            meta.get(META_DIMENSION, -1)
        ) == int(self.embedder.dimension)

    def _load_partition(self, namespace: str, collection: Any) -> _Partition:
        part = _Partition(namespace, collection)
        total = collection.count()
        mirror = total <= self.ranking.mirror_max
        if mirror:
            part.mirror = _Mirror(int(self.embedder.dimension))
        include = ["documents", "metadatas", *(["embeddings"] if mirror else [])]
        page = 5000
        for offset in range(0, total, page):
            res = collection.get(include=include, limit=page, offset=offset)
            vectors = res["embeddings"] if mirror else [None] * len(res["ids"])
            for memory_id, doc, meta, vec in zip(
                res["ids"], res["documents"], res["metadatas"], vectors, strict=True
            ):
                kind = parse_kind((meta or {}).get("kind", "fact"))
                text = doc or ""
                h = str((meta or {}).get("content_hash") or content_hash(kind, text))
                vector = None if vec is None else np.asarray(vec, dtype=np.float32)
                part.put(memory_id, _Doc(kind, text, h), vector, lexical=self.lexical)
        return part

    def _partition(self, namespace: str, *, create: bool) -> _Partition | None:
        ns = str(Namespace.parse(namespace))
        part = self._partitions.get(ns)
        if part is not None or not create:
            return part
        with self._lock:
            part = self._partitions.get(ns)
            if part is None:
                collection = self.client.get_or_create_collection(
                    collection_name(ns),
                    configuration=self.hnsw.configuration(),
                    metadata={
                        META_NAMESPACE: ns,
                        META_MODEL: self.embedder.model_id,
                        META_DIMENSION: int(self.embedder.dimension),
                    },
                    embedding_function=self._ef,
                )
                if not self._same_model(collection.metadata or {}):
                    raise EmbeddingModelMismatch(
                        f"collection for {ns} holds vectors of "
                        f"{(collection.metadata or {}).get(META_MODEL)}, not "
                        f"{self.embedder.model_id}; run `memvet reindex`"
                    )
                part = self._load_partition(ns, collection)
                self._partitions[ns] = part
        return part

    # ------------------------------------------------------------------ writes
    def upsert(self, memories: Sequence[IndexedMemory]) -> None:
        """Embed and store approved memories; unchanged ones (same hash) are not re-embedded."""
        by_ns: dict[str, dict[str, IndexedMemory]] = {}
        for m in memories:
            by_ns.setdefault(str(Namespace.parse(m.namespace)), {})[m.id] = m
        for ns, items in by_ns.items():
            part = self._partition(ns, create=True)
            assert part is not None
            todo = []
            for m in items.values():
                kind = parse_kind(m.kind)
                h = content_hash(kind, m.content)
                old = part.docs.get(m.id)
                if old is None or old.hash != h:
                    todo.append((m.id, _Doc(kind, m.content, h)))
            for start in range(0, len(todo), 1000):
                chunk = todo[start : start + 1000]
                vectors = self.embedder.embed([doc.content for _, doc in chunk])
                self._check_dimension(vectors)
                part.collection.upsert(
                    ids=[i for i, _ in chunk],
                    embeddings=np.asarray(vectors, dtype=np.float32),  # always explicit
                    documents=[doc.content for _, doc in chunk],
                    metadatas=[
                        {"kind": doc.kind.value, "content_hash": doc.hash} for _, doc in chunk
                    ],
                )
                matrix = np.asarray(vectors, dtype=np.float32)
                for row, (memory_id, doc) in enumerate(chunk):
                    part.put(memory_id, doc, matrix[row], lexical=self.lexical)
                if part.mirror is not None and len(part.mirror) > self.ranking.mirror_max:
                    part.mirror = None  # grown past exact-scan size: HNSW from now on

    def _check_dimension(self, vectors: Sequence[Sequence[float]]) -> None:
        for v in vectors:
            if len(v) != self.embedder.dimension:
                raise EmbeddingModelMismatch(
                    f"embedder {self.embedder.model_id} returned a {len(v)}-d vector, "
                    f"not {self.embedder.dimension}-d"
                )

    def remove(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Delete memories from the namespace's partition (unknown ids are ignored)."""
        part = self._partition(namespace, create=False)
        if part is None or not memory_ids:
            return
        ids = list(dict.fromkeys(memory_ids))
        part.collection.delete(ids=ids)
        for memory_id in ids:
            part.drop(memory_id)

    def refresh(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Re-read these memories from Chroma: another process (a worker sharing the Chroma
        server) wrote or deleted them, and this process's partition must follow."""
        ns = str(Namespace.parse(namespace))
        part = self._partition(ns, create=False)
        if part is None:
            try:
                collection = self.client.get_collection(
                    collection_name(ns), embedding_function=self._ef
                )
            except Exception:  # noqa: BLE001 - Chroma says "does not exist" in several ways
                return
            if not self._same_model(collection.metadata or {}):
                return
            loaded = self._load_partition(ns, collection)
            with self._lock:
                self._partitions.setdefault(ns, loaded)
            return
        ids = list(dict.fromkeys(memory_ids))
        include = ["documents", "metadatas", *(["embeddings"] if part.mirror is not None else [])]
        found: set[str] = set()
        for start in range(0, len(ids), 2000):
            res = part.collection.get(ids=ids[start : start + 2000], include=include)
            vectors = res["embeddings"] if part.mirror is not None else [None] * len(res["ids"])
            for memory_id, doc, meta, vec in zip(
                res["ids"], res["documents"], res["metadatas"], vectors, strict=True
            ):
                kind = parse_kind((meta or {}).get("kind", "fact"))
                text = doc or ""
                h = str((meta or {}).get("content_hash") or content_hash(kind, text))
                if memory_id in part.docs:
                    part.drop(memory_id)
                vector = None if vec is None else np.asarray(vec, dtype=np.float32)
                part.put(memory_id, _Doc(kind, text, h), vector, lexical=self.lexical)
                found.add(memory_id)
        for memory_id in ids:
            if memory_id not in found:
                part.drop(memory_id)

    def snapshot(self) -> dict[str, dict[str, str]]:
        """Every indexed memory: {namespace: {memory_id: content_hash}}."""
        with self._lock:
            parts = list(self._partitions.values())
        out: dict[str, dict[str, str]] = {}
        for part in parts:
            with part.lock:
                out[part.namespace] = {i: d.hash for i, d in part.docs.items()}
        return out

    def namespaces(self) -> list[str]:
        """Namespaces that have a partition (possibly empty)."""
        return sorted(self._partitions)

    def drop_namespace(self, namespace: str) -> None:
        """Delete a namespace's collection and everything in it."""
        ns = str(Namespace.parse(namespace))
        with self._lock:
            part = self._partitions.pop(ns, None)
            if part is not None:
                self.client.delete_collection(part.collection.name)

    def close(self) -> None:
        """Stop the worker threads; the client is the caller's to close."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    # ------------------------------------------------------------------ search
    def embed_query(self, query: str) -> list[float]:
        """The query's vector, from a small LRU cache when the same text was asked recently."""
        cached = self._query_cache.get(query)
        if cached is not None:
            with self._lock:
                if query in self._query_cache:
                    self._query_cache.move_to_end(query)
            return cached
        vector = self.embedder.embed([query])[0]
        if self._query_cache_size > 0:
            with self._lock:
                self._query_cache[query] = vector
                while len(self._query_cache) > self._query_cache_size:
                    self._query_cache.popitem(last=False)
        return vector

    def search(
        self,
        query: str,
        namespaces: Sequence[str],
        *,
        kinds: Sequence[Kind] | None = None,
        limit: int = 10,
        kind_weights: dict[Kind, float] | None = None,
    ) -> list[SearchHit]:
        """Top `limit` memories of the namespaces for `query`, fused, kind-weighted."""
        parts = [p for p in (self._partition(ns, create=False) for ns in namespaces) if p]
        parts = [p for p in dict.fromkeys(parts) if p.docs]
        if limit <= 0 or not parts or not query.strip():
            return []
        kind_set = frozenset(parse_kind(k) for k in kinds) if kinds else None
        weights = {
            **DEFAULT_KIND_WEIGHTS,
            **{parse_kind(k): w for k, w in (kind_weights or {}).items()},
        }
        qvec = np.asarray(self.embed_query(query), dtype=np.float32)
        qtokens = tokenize(query) if self.lexical else []

        def per_part(candidates: int) -> int:
            # the fused top `limit` over many namespaces needs fewer candidates from each
            return max(limit, candidates // len(parts), 2 * limit if len(parts) > 1 else 0)

        def one(
            part: _Partition,
        ) -> tuple[_Partition, list[tuple[str, float]], list[tuple[str, float]]]:
            dense_hits = self._dense(part, qvec, kind_set, per_part(self.ranking.dense_candidates))
            lexical_hits = self._lexical(
                part, qtokens, kind_set, per_part(self.ranking.lexical_candidates)
            )
            seen = {i for i, _ in dense_hits}
            missing = [i for i, _ in lexical_hits if i not in seen]
            if missing:  # give lexical-only candidates their exact cosine
                dense_hits = dense_hits + self._cosines(part, qvec, missing)
            return part, dense_hits, lexical_hits

        # in-memory partitions are a few numpy calls: threads would only add overhead; the
        # ones on HNSW wait on Chroma, so they go to the pool and run concurrently
        remote = [p for p in parts if p.mirror is None]
        futures = [self._executor().submit(one, p) for p in remote] if len(remote) > 1 else []
        results = [one(p) for p in parts if p.mirror is not None or len(remote) == 1]
        results += [f.result() for f in futures]

        dense: dict[tuple[str, str], float] = {}
        lexical: dict[tuple[str, str], float] = {}
        for part, d_hits, l_hits in results:
            dense.update(((part.namespace, i), s) for i, s in d_hits)
            lexical.update(((part.namespace, i), s) for i, s in l_hits)
        fused = convex_fusion(dense, lexical, alpha=self.ranking.alpha if lexical else 1.0)
        by_ns = {p.namespace: p for p in parts}
        scored: list[tuple[float, float, str, str, _Doc, float, float]] = []
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

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(
                        max_workers=self._max_workers, thread_name_prefix="memvet-recall"
                    )
        return self._pool

    def _lexical(
        self, part: _Partition, tokens: list[str], kinds: frozenset[Kind] | None, n: int
    ) -> list[tuple[str, float]]:
        if not tokens:
            return []
        groups = {_KIND_CODES[k] for k in kinds} if kinds is not None else None
        hits = part.bm25.search(tokens, limit=n, groups=groups)
        return [(h.doc_id, h.score) for h in hits]

    def _dense(
        self, part: _Partition, qvec: np.ndarray, kinds: frozenset[Kind] | None, n: int
    ) -> list[tuple[str, float]]:
        with part.lock:  # a concurrent upsert may grow or reorder the rows
            if part.mirror is not None:
                return part.mirror.search(qvec, n, kinds)
        total = len(part.docs)
        if kinds is None:
            return self._hnsw(part, qvec, min(n, total))
        selected = sum(part.kind_counts[k] for k in kinds)
        if selected == 0:
            return []
        want = min(n, selected)
        if (
            selected <= self.ranking.exact_kind_max
            or selected <= total * self.ranking.exact_kind_fraction
        ):
            return self._exact(part, qvec, kinds, want)
        # a broad filter: over-fetch from HNSW and keep the selected kinds (no Chroma `where`)
        fetch = min(total, math.ceil(want * total / selected * 1.5) + 10)
        kept = [
            (i, s)
            for i, s in self._hnsw(part, qvec, fetch)
            if (d := part.docs.get(i)) and d.kind in kinds
        ]
        if len(kept) >= want:
            return kept[:want]
        return self._exact(part, qvec, kinds, want)

    def _cosines(
        self, part: _Partition, qvec: np.ndarray, memory_ids: list[str]
    ) -> list[tuple[str, float]]:
        with part.lock:
            if part.mirror is not None:
                return part.mirror.cosines(qvec, memory_ids)
        res = part.collection.get(ids=memory_ids, include=["embeddings"])
        if not len(res["ids"]):
            return []
        sims = np.asarray(res["embeddings"], dtype=np.float32) @ qvec
        return [(i, float(s)) for i, s in zip(res["ids"], sims, strict=True)]

    def _hnsw(self, part: _Partition, qvec: np.ndarray, n: int) -> list[tuple[str, float]]:
        if n <= 0:
            return []
        res = part.collection.query(
            query_embeddings=qvec[None, :], n_results=n, include=["distances"]
        )
        return [
            (i, 1.0 - float(dist))
            for i, dist in zip(res["ids"][0], res["distances"][0], strict=True)
        ]

    def _exact(
        self, part: _Partition, qvec: np.ndarray, kinds: Iterable[Kind], n: int
    ) -> list[tuple[str, float]]:
        scored: list[tuple[str, float]] = []
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
