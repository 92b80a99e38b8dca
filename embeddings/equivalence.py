"""Semantic equivalence at intake: is a new candidate the same memory as a pending one?

Candidate vectors live here, in memory, per (namespace, kind): never in a Chroma collection
and so never reachable by recall. `reset()` at start-up only lists the candidates; a
(namespace, kind) group's vectors are read when it is first searched, through the shared
`EmbeddingCache` (vectors.py), which reads them back from the `candidate_vectors` table and
embeds only the texts it has never seen. So start-up does not grow with the queue.

Threshold (tests/embeddings/test_real.py over equivalence_pairs.py, 24 paraphrase pairs vs 24
same-topic-different-claim pairs, all-MiniLM-L6-v2): paraphrases score 0.45-0.94 (median
0.87), related-but-different 0.27-0.90. The two highest related pairs differ only in numbers
("version 2.3.0 on March 4" / "2.4.0 on April 12", 0.90; "15 minutes" / "30 days", 0.87),
so a match also needs the same numbers. With that guard the highest related pair is 0.76;
0.80 merges 75% of paraphrases and none of the related pairs. A false merge hides a distinct
claim from the reviewer; a missed merge only shows a near-duplicate in the queue, so the
default errs high.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from memvet.embeddings.lexical import tokenize
from memvet.embeddings.vectors import EmbeddingCache
from memvet.memory.kinds import Kind, parse_kind
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import Embedder, Equivalent

DEFAULT_EQUIVALENCE_THRESHOLD = 0.80

Key = tuple[str, Kind]


def numbers_of(text: str) -> frozenset[str]:
    """Tokens holding a digit (versions, ports, dates, durations): equivalents must share them."""
    return frozenset(t for t in tokenize(text) if any(c.isdigit() for c in t))


class _Group:
    def __init__(self, dimension: int) -> None:
        self.ids: list[str] = []
        self.numbers: list[frozenset[str]] = []
        self.matrix = np.zeros((0, dimension), dtype=np.float32)


class EmbeddingCandidateMatcher:
    """`CandidateMatcher` over in-memory vectors per (namespace, kind); exact cosine search.

    `embedder` may be an `EmbeddingCache` (shared with the recall index, backed by the store);
    any other Embedder gets a cache of its own, in memory only.
    """

    def __init__(self, embedder: Embedder, *, cache_size: int = 4096) -> None:
        self.vectors = (
            embedder
            if isinstance(embedder, EmbeddingCache)
            else EmbeddingCache(embedder, memory_size=cache_size)
        )
        self.dimension = self.vectors.dimension
        self._groups: dict[Key, _Group] = {}
        self._unloaded: dict[Key, dict[str, str]] = {}  # listed by reset(), not yet read
        self._where: dict[str, Key] = {}
        self._lock = threading.RLock()
        self._loading = threading.Lock()  # one group load at a time: no double embedding

    @staticmethod
    def _key(namespace: str, kind: Kind | str) -> Key:
        return str(Namespace.parse(namespace)), parse_kind(kind)

    def _vector(self, content: str) -> np.ndarray:
        vector: np.ndarray = self.vectors.vectors([content])[0]
        return vector

    def _group(self, key: Key) -> _Group | None:
        """The group's vectors, read (or embedded) now if reset() only listed them."""
        if key not in self._unloaded:
            return self._groups.get(key)
        with self._loading:
            with self._lock:
                listed = self._unloaded.get(key)
                if listed is None:
                    return self._groups.get(key)
                items = list(listed.items())
            matrix = self.vectors.vectors([content for _, content in items])
            with self._lock:
                listed = self._unloaded.pop(key, {})
                group = self._groups.setdefault(key, _Group(self.dimension))
                rows = [(cid, content, matrix[i]) for i, (cid, content) in enumerate(items)
                        if listed.get(cid) == content]  # still listed: not discarded meanwhile
                loaded = {r[0] for r in rows}
                rows += [(cid, content, self._vector(content)) for cid, content in listed.items()
                         if cid not in loaded]  # added (or changed) while this one loaded
                self._append(group, rows)
                return group

    def find(
        self, namespace: str, kind: Kind, content: str, *, threshold: float
    ) -> Equivalent | None:
        """The most similar candidate of the same namespace and kind at or above `threshold`."""
        key = self._key(namespace, kind)
        group = self._group(key)
        with self._lock:
            if group is None or not group.ids:
                return None
            ids, numbers, matrix = list(group.ids), list(group.numbers), group.matrix
        sims = matrix @ self._vector(content)
        wanted = numbers_of(content)
        for j in np.argsort(-sims):
            if sims[j] < threshold:
                break
            if numbers[j] == wanted:
                return Equivalent(candidate_id=ids[j], similarity=float(sims[j]))
        return None

    def prepare(self, contents: Sequence[str]) -> None:
        """Embed texts about to be searched and added together, in one batch."""
        self.vectors.vectors(list(contents))

    def add(self, candidate_id: str, namespace: str, kind: Kind, content: str) -> None:
        """Remember a candidate (replacing an earlier entry with the same id); its vector is
        stored, so the next start (and the recall index, on approve) reads it back."""
        vector = self.vectors.vectors([content], save=True)[0]
        key = self._key(namespace, kind)
        with self._lock:
            self._discard(candidate_id)
            self._where[candidate_id] = key
            listed = self._unloaded.get(key)
            if listed is not None:  # the group is read on first use; it will hold this one
                listed[candidate_id] = content
                return
            group = self._groups.setdefault(key, _Group(self.dimension))
            self._append(group, [(candidate_id, content, vector)])

    @staticmethod
    def _append(group: _Group, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        if not rows:
            return
        group.ids.extend(r[0] for r in rows)
        group.numbers.extend(numbers_of(r[1]) for r in rows)
        group.matrix = np.vstack([group.matrix, np.vstack([r[2] for r in rows])])

    def discard(self, candidate_ids: Sequence[str]) -> None:
        """Forget candidates (approved, rejected, archived or merged away)."""
        with self._lock:
            for cid in candidate_ids:
                self._discard(cid)

    def _discard(self, cid: str) -> None:
        key = self._where.pop(cid, None)
        if key is None:
            return
        listed = self._unloaded.get(key)
        if listed is not None:
            listed.pop(cid, None)
        group = self._groups.get(key)
        if group is None or cid not in group.ids:
            return
        j = group.ids.index(cid)
        del group.ids[j]
        del group.numbers[j]
        group.matrix = np.delete(group.matrix, j, axis=0)

    def reset(self, items: Sequence[tuple[str, str, Kind, str]]) -> None:
        """Replace everything with (candidate_id, namespace, kind, content) items; their
        vectors are read when their namespace and kind is first searched."""
        unloaded: dict[Key, dict[str, str]] = {}
        where: dict[str, Key] = {}
        for cid, ns, kind, content in items:
            key = self._key(ns, kind)
            unloaded.setdefault(key, {})[cid] = content
            where[cid] = key
        with self._lock:
            self._groups.clear()
            self._unloaded = unloaded
            self._where = where

    def warm(self) -> int:
        """Read every listed group now (a background warm-up); returns how many groups."""
        keys = list(self._unloaded)
        for key in keys:
            self._group(key)
        return len(keys)

    def flush(self) -> None:
        """Store vectors embedded while groups were read (call outside a database write)."""
        self.vectors.flush()
