"""The recall index: `ChromaMemoryIndex`, the core's `MemoryIndex` over Chroma.

Only what `upsert` was handed (approved memories) is ever searchable. The index composes:
- `partitions.Partitions`: one Chroma collection per namespace, each mirrored in memory (ids,
  kinds, contents, hashes, BM25, and the vectors of small namespaces), model-checked;
- `search.HybridSearch`: dense + BM25 candidates per namespace, fused and kind-weighted;
and itself embeds: memories on upsert (skipping unchanged ones by content hash) and queries
(through a small LRU cache).

Input from the core is trusted as typed: namespaces are canonical strings and kinds are `Kind`s
(`MemoryService` parsed them on the way in), so search and upsert parse nothing again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from memvet.embeddings.chroma import EmbeddingModelMismatch, HnswSettings
from memvet.embeddings.partitions import Doc, Partitions
from memvet.embeddings.search import HybridSearch, RankingSettings
from memvet.memory.kinds import Kind
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import Embedder, IndexedMemory, SearchHit, index_hash

_EMBED_BATCH = 1000  # texts per embedder call on upsert


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
        self._search = HybridSearch(self.ranking, lexical=lexical, max_workers=max_workers)
        self._query_cache: OrderedDict[str, list[float]] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._lock = threading.Lock()  # guards the query cache
        self._partitions = Partitions(
            client,
            embedder,
            hnsw=self.hnsw,
            lexical=lexical,
            mirror_max=self.ranking.mirror_max,
            on_model_mismatch=on_model_mismatch,
        )

    # ------------------------------------------------------------------ writes
    def upsert(self, memories: Sequence[IndexedMemory]) -> None:
        """Embed and store approved memories; unchanged ones (same hash) are not re-embedded."""
        by_ns: dict[str, dict[str, IndexedMemory]] = {}
        for m in memories:
            by_ns.setdefault(m.namespace, {})[m.id] = m
        for ns, items in by_ns.items():
            part = self._partitions.get_or_create(ns)
            todo = []
            for m in items.values():
                h = index_hash(m.kind, m.content)
                old = part.docs.get(m.id)
                if old is None or old.hash != h:
                    todo.append((m.id, Doc(m.kind, m.content, h)))
            for start in range(0, len(todo), _EMBED_BATCH):
                chunk = todo[start : start + _EMBED_BATCH]
                vectors = self.embedder.embed([doc.content for _, doc in chunk])
                self._check_dimension(vectors)
                part.write(chunk, np.asarray(vectors, dtype=np.float32))

    def _check_dimension(self, vectors: Sequence[Sequence[float]]) -> None:
        for v in vectors:
            if len(v) != self.embedder.dimension:
                raise EmbeddingModelMismatch(
                    f"embedder {self.embedder.model_id} returned a {len(v)}-d vector, "
                    f"not {self.embedder.dimension}-d"
                )

    def remove(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Delete memories from the namespace's partition (unknown ids are ignored)."""
        part = self._partitions.get(namespace)
        if part is None or not memory_ids:
            return
        part.delete(list(dict.fromkeys(memory_ids)))

    def refresh(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Re-read these memories from Chroma: another process (a worker sharing the Chroma
        server) wrote or deleted them, and this process's partition must follow."""
        ns = str(Namespace.parse(namespace))  # the name came from another process
        part = self._partitions.get(ns)
        if part is None:
            self._partitions.open(ns)
        else:
            part.reload(memory_ids)

    def snapshot(self) -> dict[str, dict[str, str]]:
        """Every indexed memory: {namespace: {memory_id: content_hash}}."""
        return {part.namespace: part.hashes() for part in self._partitions.all()}

    def namespaces(self) -> list[str]:
        """Namespaces that have a partition (possibly empty)."""
        return self._partitions.names()

    def drop_namespace(self, namespace: str) -> None:
        """Delete a namespace's collection and everything in it."""
        self._partitions.drop(str(Namespace.parse(namespace)))

    def close(self) -> None:
        """Stop the worker threads; the client is the caller's to close."""
        self._search.close()

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
        parts = [p for p in (self._partitions.get(ns) for ns in namespaces) if p]
        parts = [p for p in dict.fromkeys(parts) if p.docs]
        if limit <= 0 or not parts or not query.strip():
            return []
        qvec = np.asarray(self.embed_query(query), dtype=np.float32)
        return self._search.search(
            parts,
            query,
            qvec,
            kinds=frozenset(kinds) if kinds else None,
            limit=limit,
            kind_weights=kind_weights,
        )
