"""The recall index: `ChromaMemoryIndex`, the core's `MemoryIndex` over Chroma.

Only what `upsert` was handed (approved memories) is ever searchable. The index composes:
- `partitions.Partitions`: one Chroma collection per namespace, each mirrored in memory (ids,
  kinds, contents, hashes, BM25, and the vectors of small namespaces), model-checked;
- `search.HybridSearch`: dense + BM25 candidates per namespace, fused and kind-weighted;
and itself embeds: memories on upsert (skipping unchanged ones by content hash, and reading
vectors already made for the same text through the `vectors.EmbeddingCache` it shares with the
equivalence matcher, so an approved candidate is not embedded again), all namespaces' new texts
in one large batch; and queries (through a small LRU cache, never stored).

Input from the core is trusted as typed: namespaces are canonical strings and kinds are `Kind`s
(`MemoryService` parsed them on the way in), so search and upsert parse nothing again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from memvet.embeddings.chroma import EmbeddingModelMismatch, HnswSettings
from memvet.embeddings.partitions import Doc, Partition, Partitions
from memvet.embeddings.search import HybridSearch, RankingSettings
from memvet.embeddings.vectors import EmbeddingCache
from memvet.memory.kinds import Kind
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import Embedder, IndexedMemory, SearchHit, index_hash

_WRITE_BATCH = 4096  # rows per Chroma upsert (Chroma's limit is a little over 5000)


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
        owns_client: bool = False,
    ) -> None:
        self.client = client
        self._owns_client = owns_client
        # `embedder` may be the EmbeddingCache shared with the matcher; queries skip it
        self.vectors = (
            embedder if isinstance(embedder, EmbeddingCache) else EmbeddingCache(embedder)
        )
        self.embedder: Embedder = self.vectors.inner
        self.model_id = self.embedder.model_id
        self.hnsw = hnsw or HnswSettings()
        self.lexical = lexical
        self.ranking = ranking or RankingSettings()
        self._search = HybridSearch(self.ranking, lexical=lexical, max_workers=max_workers)
        self._query_cache: OrderedDict[str, list[float]] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._lock = threading.Lock()  # guards the query cache
        self._partitions = Partitions(
            client,
            self.embedder,
            hnsw=self.hnsw,
            lexical=lexical,
            mirror_max=self.ranking.mirror_max,
            on_model_mismatch=on_model_mismatch,
            pool_exact_max=self.ranking.pool_exact_max,
        )

    # ------------------------------------------------------------------ writes
    def embed_ahead(self, memories: Sequence[IndexedMemory]) -> None:
        """Embed (and store) what `upsert` of these memories will need, without writing them:
        the core runs it for the next batch while this one is written."""
        texts = []
        for m in memories:
            part = self._partitions.get(m.namespace)
            old = part.docs.get(m.id) if part is not None else None
            if old is None or old.hash != index_hash(m.kind, m.content):
                texts.append(m.content)
        if texts:
            self.vectors.vectors(texts, save=True)

    def upsert(
        self,
        memories: Sequence[IndexedMemory],
        *,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Embed and store approved memories; unchanged ones (same hash) are skipped, and texts
        embedded before (for the matcher, say) are read back. `progress` hears how many texts
        were embedded after each batch."""
        by_ns: dict[str, dict[str, IndexedMemory]] = {}
        for m in memories:
            by_ns.setdefault(m.namespace, {})[m.id] = m
        todo: list[tuple[Partition, str, Doc]] = []
        for ns, items in by_ns.items():
            part = self._partitions.get_or_create(ns)
            for m in items.values():
                h = index_hash(m.kind, m.content)
                old = part.docs.get(m.id)
                if old is None or old.hash != h:
                    todo.append((part, m.id, Doc(m.kind, m.content, h)))
        if not todo:
            return
        try:
            vectors = self.vectors.vectors(
                [doc.content for _, _, doc in todo], save=True, progress=progress
            )
        except ValueError as exc:  # the embedder answered in another dimension
            raise EmbeddingModelMismatch(str(exc)) from exc
        rows: dict[Partition, list[int]] = {}
        for i, (part, _, _) in enumerate(todo):
            rows.setdefault(part, []).append(i)
        for part, idx in rows.items():
            for start in range(0, len(idx), _WRITE_BATCH):
                chunk = idx[start : start + _WRITE_BATCH]
                part.write([(todo[i][1], todo[i][2]) for i in chunk], vectors[chunk])

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
        """Stop the worker threads, and close the client if it is this index's own (else it is
        the caller's to close). An embedded client's store is cached per path in the process
        until its last client closes: a client left open would serve the next one opened on
        that path what it read before, not what another process wrote since."""
        self._search.close()
        if self._owns_client:
            self.client.close()

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
        in_memory = sum(1 for p in parts if p.mirror is not None)
        pool = (
            self._partitions.ready_pool()
            if in_memory >= max(2, self.ranking.pool_min_namespaces)
            else None
        )
        return self._search.search(
            parts,
            query,
            qvec,
            kinds=frozenset(kinds) if kinds else None,
            limit=limit,
            kind_weights=kind_weights,
            pool=pool,
        )
