"""Semantic equivalence at intake: is a new candidate the same memory as a pending one?

Candidate vectors live here, in memory, per (namespace, kind): never in a Chroma collection
and so never reachable by recall. Rebuilt from the database by `reset()` at start-up.

Threshold (tests/embeddings/test_equivalence_threshold.py, 24 paraphrase pairs vs 24
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
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memvet.embeddings.lexical import tokenize
from memvet.memory.kinds import Kind, parse_kind
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import Embedder, Equivalent

DEFAULT_EQUIVALENCE_THRESHOLD = 0.80


def numbers_of(text: str) -> frozenset[str]:
    """Tokens holding a digit (versions, ports, dates, durations): equivalents must share them."""
    return frozenset(t for t in tokenize(text) if any(c.isdigit() for c in t))


class _Group:
    def __init__(self, dimension: int) -> None:
        self.ids: list[str] = []
        self.numbers: list[frozenset[str]] = []
        self.matrix = np.zeros((0, dimension), dtype=np.float32)


class EmbeddingCandidateMatcher:
    """`CandidateMatcher` over in-memory vectors per (namespace, kind); exact cosine search."""

    def __init__(self, embedder: Embedder, *, cache_size: int = 256) -> None:
        self.embedder = embedder
        self._groups: dict[tuple[str, Kind], _Group] = {}
        self._where: dict[str, tuple[str, Kind]] = {}
        self._lock = threading.RLock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()  # find() then add() embeds once
        self._cache_size = cache_size

    def _vector(self, content: str) -> np.ndarray:
        with self._lock:
            vec = self._recent.get(content)
        if vec is None:
            vec = np.asarray(self.embedder.embed([content])[0], dtype=np.float32)
            with self._lock:
                self._recent[content] = vec
                while len(self._recent) > self._cache_size:
                    self._recent.popitem(last=False)
        return vec

    @staticmethod
    def _key(namespace: str, kind: Kind | str) -> tuple[str, Kind]:
        return str(Namespace.parse(namespace)), parse_kind(kind)

    def find(
        self, namespace: str, kind: Kind, content: str, *, threshold: float
    ) -> Equivalent | None:
        """The most similar candidate of the same namespace and kind at or above `threshold`."""
        key = self._key(namespace, kind)
        with self._lock:
            group = self._groups.get(key)
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

    def add(self, candidate_id: str, namespace: str, kind: Kind, content: str) -> None:
        """Remember a candidate (replacing an earlier entry with the same id)."""
        self._add_many([(candidate_id, namespace, kind, content)], [self._vector(content)])

    def _add_many(
        self, items: Sequence[tuple[str, str, Kind, str]], vectors: Sequence[np.ndarray]
    ) -> None:
        with self._lock:
            self.discard([item[0] for item in items])
            staged: dict[tuple[str, Kind], list[tuple[str, frozenset[str], np.ndarray]]] = {}
            for (cid, ns, kind, content), vec in zip(items, vectors, strict=True):
                key = self._key(ns, kind)
                staged.setdefault(key, []).append((cid, numbers_of(content), vec))
                self._where[cid] = key
            for key, rows in staged.items():
                group = self._groups.setdefault(key, _Group(self.embedder.dimension))
                group.ids.extend(r[0] for r in rows)
                group.numbers.extend(r[1] for r in rows)
                group.matrix = np.vstack([group.matrix, np.vstack([r[2] for r in rows])])

    def discard(self, candidate_ids: Sequence[str]) -> None:
        """Forget candidates (approved, rejected, archived or merged away)."""
        with self._lock:
            for cid in candidate_ids:
                key = self._where.pop(cid, None)
                group = self._groups.get(key) if key else None
                if group is None or cid not in group.ids:
                    continue
                j = group.ids.index(cid)
                del group.ids[j]
                del group.numbers[j]
                group.matrix = np.delete(group.matrix, j, axis=0)

    def reset(self, items: Sequence[tuple[str, str, Kind, str]]) -> None:
        """Replace everything with (candidate_id, namespace, kind, content) items."""
        vectors: list[np.ndarray] = []
        for start in range(0, len(items), 256):
            chunk = items[start : start + 256]
            vectors.extend(
                np.asarray(v, dtype=np.float32)
                for v in self.embedder.embed([content for *_, content in chunk])
            )
        with self._lock:
            self._groups.clear()
            self._where.clear()
            self._add_many(items, vectors)
