"""Namespace partitions: one Chroma collection per namespace and what this process keeps of it.

A `Partition` is one namespace: its collection (the vectors, on disk or on a Chroma server) and,
in memory, its ids -> (kind, content, content hash), a BM25 index, per-kind counts, and its
vectors too while it is small (`Mirror`). It is the only code that reads or writes a
collection's rows.

`Partitions` is the set of them for one embedding model: opened from Chroma at start (one
collection per namespace, named by `chroma.collection_name` for that model; other models'
collections are left alone), created on a namespace's first write, each collection stamped with
the embedding model's id and dimension (`chroma.collection_metadata`); a collection of another
model under this model's name is refused (`EmbeddingModelMismatch`) or, if asked, deleted for a
rebuild, never mixed.

Namespaces handed in are the core's canonical strings and are trusted; a name is parsed only
where it comes from outside the process or a collection is about to be created. What Chroma
hands back is checked: a stored kind that is not a memory kind is logged and skipped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from memvet.embeddings.chroma import (
    META_DIMENSION,
    META_MODEL,
    EmbeddingModelMismatch,
    ExplicitEmbeddingFunction,
    HnswSettings,
    collection_metadata,
    collection_name,
    list_names,
    model_tag,
    parse_collection_name,
    same_model,
)
from memvet.embeddings.lexical import BM25Index
from memvet.embeddings.mirror import KIND_CODES, Mirror
from memvet.embeddings.pool import Pool
from memvet.memory.errors import InvalidKind
from memvet.memory.kinds import Kind, parse_kind
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import Embedder, index_hash

log = logging.getLogger(__name__)

_PAGE = 5000  # rows per Chroma read when loading a whole collection
META_CONTENT = "content"  # a memory's text, in its row's metadata
_ID_BATCH = 2000  # ids per Chroma read by id


@dataclass
class Doc:
    """What a partition keeps in memory of one memory (its vector lives in Chroma / a Mirror)."""

    kind: Kind
    content: str
    hash: str


class Partition:
    """One namespace: its collection, documents, BM25 index, and vectors when small enough."""

    def __init__(
        self,
        namespace: str,
        collection: Any,
        *,
        lexical: bool,
        mirror_max: int,
        dimension: int,
        code: int = 0,
        pool: Pool | None = None,
    ) -> None:
        self.namespace = namespace
        self.code = code  # this namespace's rows in the pool carry it
        self.pool = pool
        self.collection = collection
        self.lexical = lexical
        self.mirror_max = mirror_max
        self.dimension = dimension
        self.docs: dict[str, Doc] = {}
        self.bm25 = BM25Index()
        self.kind_counts: dict[Kind, int] = dict.fromkeys(Kind, 0)
        self.vectors: dict[Kind, tuple[list[str], np.ndarray]] = {}
        self.mirror: Mirror | None = None
        self.lock = threading.RLock()

    # ------------------------------------------------------------------ in memory
    def put(self, memory_id: str, doc: Doc, vector: np.ndarray | None) -> None:
        """Record one memory in memory (not in Chroma): docs, counts, BM25, mirror."""
        with self.lock:
            if self.mirror is not None:
                if vector is None:
                    self._unmirror()  # vectors not at hand: fall back to Chroma for good
                else:
                    self.mirror.set(memory_id, vector, doc.kind)
                    if self.pool is not None:
                        self.pool.set(self.code, memory_id, vector, doc.kind)
            old = self.docs.get(memory_id)
            if old is not None:
                self.kind_counts[old.kind] -= 1
                self.vectors.pop(old.kind, None)
            self.docs[memory_id] = doc
            self.kind_counts[doc.kind] += 1
            self.vectors.pop(doc.kind, None)
            if self.lexical:
                self.bm25.add(memory_id, doc.content, group=KIND_CODES[doc.kind])

    def drop(self, memory_id: str) -> None:
        """Forget one memory in memory (not in Chroma)."""
        with self.lock:
            old = self.docs.pop(memory_id, None)
            if self.mirror is not None:
                self.mirror.remove(memory_id)
                if self.pool is not None:
                    self.pool.remove(self.code, [memory_id])
            if old is not None:
                self.kind_counts[old.kind] -= 1
                self.vectors.pop(old.kind, None)
                self.bm25.remove([memory_id])

    def _unmirror(self) -> None:
        self.mirror = None
        if self.pool is not None:
            self.pool.remove_namespace(self.code)

    def pool_rows(self) -> list[tuple[int, str, Kind, np.ndarray]]:
        """This namespace's rows for the pool (none unless its vectors are in memory)."""
        mirror = self.mirror
        if mirror is None:
            return []
        kinds = list(KIND_CODES)
        n = len(mirror)
        return [(self.code, mirror.ids[i], kinds[int(mirror.kinds[i])], mirror.matrix[i])
                for i in range(n)]

    def hashes(self) -> dict[str, str]:
        """{memory_id: content_hash} of everything in the partition."""
        with self.lock:
            return {i: d.hash for i, d in self.docs.items()}

    # ------------------------------------------------------------------ Chroma writes
    def write(self, docs: Sequence[tuple[str, Doc]], vectors: np.ndarray) -> None:
        """Store memories (row i of `vectors` is docs[i]'s) in the collection, then in memory."""
        # The text goes in the metadata, not in `documents`: Chroma builds a full-text index of
        # documents, which memvet never queries (its BM25 is its own), and that index was a
        # third of the write (6,000 rows: 3.3 s with documents, 2.3 s without).
        self.collection.upsert(
            ids=[i for i, _ in docs],
            embeddings=vectors,  # always explicit
            metadatas=[
                {"kind": doc.kind.value, "content_hash": doc.hash, META_CONTENT: doc.content}
                for _, doc in docs
            ],
        )
        for row, (memory_id, doc) in enumerate(docs):
            self.put(memory_id, doc, vectors[row])
        with self.lock:
            if self.mirror is not None and len(self.mirror) > self.mirror_max:
                self._unmirror()  # grown past exact-scan size: HNSW from now on

    def delete(self, memory_ids: list[str]) -> None:
        """Delete memories from the collection and from memory."""
        self.collection.delete(ids=memory_ids)
        for memory_id in memory_ids:
            self.drop(memory_id)

    # ------------------------------------------------------------------ Chroma reads
    def load(self) -> None:
        """Read the whole collection into memory (vectors too, if it is small enough)."""
        total = self.collection.count()
        mirror = total <= self.mirror_max
        if mirror:
            self.mirror = Mirror(self.dimension)
        include = ["documents", "metadatas", *(["embeddings"] if mirror else [])]
        for offset in range(0, total, _PAGE):
            res = self.collection.get(include=include, limit=_PAGE, offset=offset)
            for memory_id, doc, vector in self._rows(res, with_vectors=mirror):
                self.put(memory_id, doc, vector)

    def reload(self, memory_ids: Sequence[str]) -> None:
        """Re-read these memories from the collection: another process wrote or deleted them."""
        ids = list(dict.fromkeys(memory_ids))
        include = ["documents", "metadatas", *(["embeddings"] if self.mirror is not None else [])]
        found: set[str] = set()
        for start in range(0, len(ids), _ID_BATCH):
            res = self.collection.get(ids=ids[start : start + _ID_BATCH], include=include)
            for memory_id, doc, vector in self._rows(res, with_vectors=self.mirror is not None):
                if memory_id in self.docs:
                    self.drop(memory_id)
                self.put(memory_id, doc, vector)
                found.add(memory_id)
        for memory_id in ids:
            if memory_id not in found:
                self.drop(memory_id)

    def _rows(
        self, res: Any, *, with_vectors: bool
    ) -> Iterator[tuple[str, Doc, np.ndarray | None]]:
        """Decode a Chroma `get` result; a row whose stored kind is not a Kind is skipped."""
        vectors = res["embeddings"] if with_vectors else [None] * len(res["ids"])
        for memory_id, text, meta, vec in zip(
            res["ids"], res["documents"], res["metadatas"], vectors, strict=True
        ):
            meta = meta or {}
            stored = meta.get("kind", "fact")
            try:  # written by this code, but read back from disk or another process's server
                kind = parse_kind(stored)
            except InvalidKind:
                log.warning(
                    "skipping memory %s in %s: its stored kind %r is not a memory kind",
                    memory_id,
                    self.namespace,
                    str(stored)[:40],
                )
                continue
            text = str(meta.get(META_CONTENT) or text or "")  # documents: written before
            h = str(meta.get("content_hash") or index_hash(kind, text))
            vector = None if vec is None else np.asarray(vec, dtype=np.float32)
            yield memory_id, Doc(kind, text, h), vector

    def kind_vectors(self, kind: Kind) -> tuple[list[str], np.ndarray]:
        """The vectors of one kind, fetched from Chroma once and kept until that kind changes."""
        with self.lock:
            cached = self.vectors.get(kind)
            if cached is not None:
                return cached
            ids = [i for i, d in self.docs.items() if d.kind == kind]
        rows: list[np.ndarray] = []
        got_ids: list[str] = []
        for start in range(0, len(ids), _ID_BATCH):
            res = self.collection.get(ids=ids[start : start + _ID_BATCH], include=["embeddings"])
            got_ids.extend(res["ids"])
            rows.extend(np.asarray(e, dtype=np.float32) for e in res["embeddings"])
        matrix = np.vstack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
        with self.lock:
            self.vectors[kind] = (got_ids, matrix)
        return got_ids, matrix

    def mirror_rows(self, memory_ids: list[str]) -> tuple[list[str], np.ndarray]:
        """(ids found, their rows) from the in-memory vectors (none if not held in memory)."""
        with self.lock:
            mirror = self.mirror
            if mirror is None:
                return [], np.zeros((0, self.dimension), dtype=np.float32)
            found = [i for i in memory_ids if i in mirror.row_of]
            return found, mirror.matrix[[mirror.row_of[i] for i in found]]

    def nearest(self, qvec: np.ndarray, n: int) -> list[tuple[str, float]]:
        """The `n` approximate nearest neighbours from Chroma's HNSW, as (id, cosine)."""
        if n <= 0:
            return []
        res = self.collection.query(
            query_embeddings=qvec[None, :], n_results=n, include=["distances"]
        )
        return [
            (i, 1.0 - float(dist))
            for i, dist in zip(res["ids"][0], res["distances"][0], strict=True)
        ]

    def cosines(self, qvec: np.ndarray, memory_ids: list[str]) -> list[tuple[str, float]]:
        """The exact cosine of `qvec` with each of these memories (from the mirror or Chroma)."""
        with self.lock:
            if self.mirror is not None:
                return self.mirror.cosines(qvec, memory_ids)
        res = self.collection.get(ids=memory_ids, include=["embeddings"])
        if not len(res["ids"]):
            return []
        sims = np.asarray(res["embeddings"], dtype=np.float32) @ qvec
        return [(i, float(s)) for i, s in zip(res["ids"], sims, strict=True)]


class Partitions:
    """Every namespace's partition: opened from Chroma at start, created on first write."""

    def __init__(
        self,
        client: Any,
        embedder: Embedder,
        *,
        hnsw: HnswSettings,
        lexical: bool,
        mirror_max: int,
        on_model_mismatch: Literal["raise", "rebuild"],
        pool_exact_max: int = 20_000,
    ) -> None:
        self.client = client
        self.embedder = embedder
        self.hnsw = hnsw
        self.lexical = lexical
        self.mirror_max = mirror_max
        self._ef = ExplicitEmbeddingFunction(embedder)
        self._by_namespace: dict[str, Partition] = {}
        self._lock = threading.RLock()
        self._codes = 0
        self.pool = Pool(int(embedder.dimension), exact_max=pool_exact_max)
        self._pool_lock = threading.Lock()
        self._open_existing(on_model_mismatch)

    def get(self, namespace: str) -> Partition | None:
        """The partition of a (canonical) namespace, if it has one."""
        return self._by_namespace.get(namespace)

    def get_or_create(self, namespace: str) -> Partition:
        """The namespace's partition, creating its collection on first use."""
        part = self._by_namespace.get(namespace)
        if part is not None:
            return part
        ns = str(Namespace.parse(namespace))  # about to name a collection: check it once
        with self._lock:
            part = self._by_namespace.get(ns)
            if part is None:
                collection = self.client.get_or_create_collection(
                    collection_name(ns, self.embedder.model_id),
                    configuration=self.hnsw.configuration(),
                    metadata=collection_metadata(ns, self.embedder),
                    embedding_function=self._ef,
                )
                if not same_model(collection.metadata or {}, self.embedder):
                    raise EmbeddingModelMismatch(
                        f"collection for {ns} holds vectors of "
                        f"{(collection.metadata or {}).get(META_MODEL)}, not "
                        f"{self.embedder.model_id}; run `memvet reindex`"
                    )
                part = self._load(ns, collection)
                self._by_namespace[ns] = part
        return part

    def open(self, namespace: str) -> None:
        """Load a namespace's collection another process created (no-op if none, or foreign)."""
        try:
            collection = self.client.get_collection(
                collection_name(namespace, self.embedder.model_id), embedding_function=self._ef
            )
        except Exception:  # noqa: BLE001 - Chroma says "does not exist" in several ways
            return
        if not same_model(collection.metadata or {}, self.embedder):
            return
        loaded = self._load(namespace, collection)
        with self._lock:
            self._by_namespace.setdefault(namespace, loaded)

    def drop(self, namespace: str) -> None:
        """Delete a namespace's collection and its partition."""
        with self._lock:
            part = self._by_namespace.pop(namespace, None)
            if part is not None:
                self.client.delete_collection(part.collection.name)
                self.pool.remove_namespace(part.code)

    def ready_pool(self) -> Pool:
        """The pool of in-memory namespaces, built (or refitted, once it has doubled) now."""
        pool = self.pool
        if pool.built and not pool.stale():
            return pool
        with self._pool_lock:
            if pool.built and not pool.stale():
                return pool
            parts = sorted(self.all(), key=lambda p: p.code)
            for part in parts:  # no write may slip between a snapshot and the build
                part.lock.acquire()
            try:
                pool.build(row for part in parts for row in part.pool_rows())
            finally:
                for part in parts:
                    part.lock.release()
        return pool

    def all(self) -> list[Partition]:
        """Every partition, as of now."""
        with self._lock:
            return list(self._by_namespace.values())

    def names(self) -> list[str]:
        """Namespaces that have a partition (possibly empty), sorted."""
        return sorted(self._by_namespace)

    def _open_existing(self, on_mismatch: str) -> None:
        mismatched: list[str] = []
        tag = model_tag(self.embedder.model_id)
        for name in list_names(self.client):
            parsed = parse_collection_name(name)
            if parsed is None or parsed[1] != tag:
                continue  # not ours, or another model's (a reindex builds those beside these)
            namespace = parsed[0]
            collection = self.client.get_collection(name, embedding_function=self._ef)
            meta = collection.metadata or {}
            if not same_model(meta, self.embedder):
                if on_mismatch == "rebuild":
                    self.client.delete_collection(name)
                    continue
                mismatched.append(
                    f"{namespace} ({meta.get(META_MODEL)}, dim {meta.get(META_DIMENSION)})"
                )
                continue
            self._by_namespace[namespace] = self._load(namespace, collection)
        if mismatched:
            raise EmbeddingModelMismatch(
                f"the recall index holds vectors of another embedding model than "
                f"{self.embedder.model_id} (dim {self.embedder.dimension}): "
                + ", ".join(mismatched[:5])
                + "; run `memvet reindex` to rebuild it with the configured model"
            )

    def _load(self, namespace: str, collection: Any) -> Partition:
        with self._lock:
            self._codes += 1
            code = self._codes
        part = Partition(
            namespace,
            collection,
            lexical=self.lexical,
            mirror_max=self.mirror_max,
            dimension=int(self.embedder.dimension),
            code=code,
            pool=self.pool,
        )
        part.load()
        return part
