"""The small namespaces' vectors as one matrix, so recall over many namespaces is one scan.

Each namespace held in memory (`mirror.Mirror`) is searched exactly, but one scan per namespace
costs a round of Python and numpy calls each: over 50 namespaces that overhead, not the
arithmetic, was most of a recall. The `Pool` keeps every mirrored namespace's vectors in one
matrix (a row per memory, with its namespace's code and its kind), and a search over many of
them is one matrix-vector product, masked to the namespaces (and kinds) asked for.

Past `exact_max` rows the scan itself is the cost (100k x 384 floats is 150 MB read per
query). The pool then keeps its rows projected on their first `reduced` principal components
(fitted on a sample of its own vectors; refitted when it has doubled since) and the search is
two-stage: the top `rerank` rows by the projected score, then their exact cosine from the
mirrors. Measured on 100k real MiniLM vectors of bench/recall_latency.py's corpus with 200
LoCoMo questions: 96 components and a 200-row rerank find the exact top 10 (recall@10 1.000,
recall@50 0.992) in a fifth of the exact scan's time.

The pool is built on the first search that wants it and then follows every write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping

import numpy as np

from memvet.embeddings.mirror import KIND_CODES
from memvet.memory.kinds import Kind

Rows = list[tuple[int, str, float]]  # (namespace code, memory id, score)


class Pool:
    """Rows of every mirrored namespace: (code, memory id) -> a row of one matrix."""

    def __init__(
        self,
        dimension: int,
        *,
        exact_max: int = 20_000,
        reduced: int = 96,
        rerank: int = 200,
        fit_sample: int = 20_000,
    ) -> None:
        self.dimension = dimension
        self.exact_max = exact_max
        self.reduced = reduced
        self.rerank = rerank
        self.fit_sample = fit_sample
        self.built = False
        self._projection: np.ndarray | None = None  # dimension x reduced, or None: exact
        self._fitted_rows = 0
        self._width = dimension
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._owner = np.zeros(0, dtype=np.int32)  # namespace code; -1: a free row
        self._kinds = np.zeros(0, dtype=np.int16)
        self._keys: list[tuple[int, str] | None] = []
        self._row_of: dict[tuple[int, str], int] = {}
        self._used = 0
        self._free = 0
        self._max_code = -1
        self._held: dict[int, int] = {}  # namespace code -> rows
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._row_of)

    # ------------------------------------------------------------------ writes
    def build(self, rows: Iterable[tuple[int, str, Kind, np.ndarray]]) -> None:
        """(Re)fill the pool from every mirrored namespace's rows."""
        items = list(rows)
        with self._lock:
            vectors = (
                np.vstack([r[3] for r in items])
                if items
                else np.zeros((0, self.dimension), dtype=np.float32)
            )
            self._fit(vectors)
            self._matrix = self._project(vectors)
            self._owner = np.asarray([r[0] for r in items], dtype=np.int32)
            self._kinds = np.asarray([KIND_CODES[r[2]] for r in items], dtype=np.int16)
            self._keys = [(r[0], r[1]) for r in items]
            self._row_of = {(r[0], r[1]): i for i, r in enumerate(items)}
            self._used, self._free = len(items), 0
            self._max_code = max((r[0] for r in items), default=-1)
            self._held = {}
            for r in items:
                self._held[r[0]] = self._held.get(r[0], 0) + 1
            self.built = True

    def _fit(self, vectors: np.ndarray) -> None:
        """Exact rows while small; past `exact_max`, the top principal components."""
        if len(vectors) <= self.exact_max:
            self._projection, self._width = None, self.dimension
            self._fitted_rows = len(vectors)
            return
        rng = np.random.default_rng(len(vectors))
        sample = vectors[rng.choice(len(vectors), min(len(vectors), self.fit_sample), False)]
        _, _, vt = np.linalg.svd(sample - sample.mean(axis=0), full_matrices=False)
        # the mean shifts every score of a query by one constant: the ranking ignores it
        self._projection = np.ascontiguousarray(vt[: self.reduced].T, dtype=np.float32)
        self._width = self._projection.shape[1]
        self._fitted_rows = len(vectors)

    def _project(self, vectors: np.ndarray) -> np.ndarray:
        if self._projection is None:
            return np.ascontiguousarray(vectors, dtype=np.float32)
        return np.ascontiguousarray(vectors @ self._projection, dtype=np.float32)

    def stale(self) -> bool:
        """Whether the pool should be rebuilt: grown past exact size, or doubled since fitted."""
        n = len(self._row_of)
        if self._projection is None:
            return n > self.exact_max
        return n > 2 * self._fitted_rows

    def set(self, code: int, memory_id: str, vector: np.ndarray, kind: Kind) -> None:
        """Add or overwrite one row (no-op until the pool is built)."""
        if not self.built:
            return
        with self._lock:
            key = (code, memory_id)
            row = self._row_of.get(key)
            if row is None:
                if self._used == len(self._matrix):
                    self._grow()
                row = self._used
                self._used += 1
                self._keys.append(key)
                self._row_of[key] = row
                self._held[code] = self._held.get(code, 0) + 1
            self._matrix[row] = self._project(vector[None, :])[0]
            self._owner[row] = code
            self._kinds[row] = KIND_CODES[kind]
            self._max_code = max(self._max_code, code)

    def remove(self, code: int, memory_ids: Iterable[str]) -> None:
        """Free these rows (unknown ids are ignored); compacts when a quarter is free."""
        if not self.built:
            return
        with self._lock:
            for memory_id in memory_ids:
                row = self._row_of.pop((code, memory_id), None)
                if row is not None:
                    self._owner[row] = -1
                    self._keys[row] = None
                    self._free += 1
                    left = self._held.get(code, 1) - 1
                    if left:
                        self._held[code] = left
                    else:
                        self._held.pop(code, None)
            if self._free > max(64, self._used // 4):
                self._compact()

    def remove_namespace(self, code: int) -> None:
        """Free every row of one namespace (it left memory, or was dropped)."""
        if not self.built:
            return
        with self._lock:
            ids = [k[1] for k in self._row_of if k[0] == code]
        self.remove(code, ids)

    def _grow(self) -> None:
        size = max(64, 2 * len(self._matrix))
        matrix = np.zeros((size, self._width), dtype=np.float32)
        matrix[: self._used] = self._matrix[: self._used]
        owner = np.full(size, -1, dtype=np.int32)
        owner[: self._used] = self._owner[: self._used]
        kinds = np.zeros(size, dtype=np.int16)
        kinds[: self._used] = self._kinds[: self._used]
        self._matrix, self._owner, self._kinds = matrix, owner, kinds

    def _compact(self) -> None:
        live = np.flatnonzero(self._owner[: self._used] >= 0)
        self._matrix = np.ascontiguousarray(self._matrix[live])
        self._owner = self._owner[live]
        self._kinds = self._kinds[live]
        self._keys = [self._keys[i] for i in live]
        self._row_of = {k: i for i, k in enumerate(self._keys) if k is not None}
        self._used, self._free = len(live), 0

    # ------------------------------------------------------------------ search
    def search(
        self,
        qvec: np.ndarray,
        codes: Collection[int],
        kinds: frozenset[Kind] | None,
        n: int,
        exact: Callable[[Mapping[int, list[str]]], Rows],
    ) -> Rows:
        """The `n` rows of these namespaces (and kinds) most cosine-similar to `qvec`.

        `exact({code: ids})` gives exact cosines, for the rerank when rows are projected."""
        with self._lock:
            used = self._used
            if used == 0 or n <= 0:
                return []
            projection = self._projection
            q = qvec if projection is None else qvec @ projection
            scores = self._matrix[:used] @ q
            # a table indexed by code + 1 (row 0 stands for free rows, code -1)
            owner = self._owner[:used]
            mask: np.ndarray | None = None
            if not set(self._held) <= set(codes):  # some namespaces only
                wanted = np.zeros(max(self._max_code, max(codes, default=0)) + 2, dtype=bool)
                wanted[np.fromiter(codes, dtype=np.int64, count=len(codes)) + 1] = True
                mask = wanted[owner + 1]
            elif self._free:
                mask = owner >= 0
            if kinds is not None:
                allowed = np.zeros(len(KIND_CODES), dtype=bool)
                allowed[[KIND_CODES[k] for k in kinds]] = True
                by_kind = allowed[self._kinds[:used]]
                mask = by_kind if mask is None else mask & by_kind
            take = n if projection is None else max(n, self.rerank)
            if mask is None:
                rows = np.arange(used)
                if used > take:
                    rows = np.argpartition(-scores, take - 1)[:take]
            else:
                rows = np.flatnonzero(mask)
                if len(rows) > take:
                    rows = rows[np.argpartition(-scores[rows], take - 1)[:take]]
            found = [(self._keys[r], float(scores[r])) for r in rows]
        hits: Rows = [(key[0], key[1], score) for key, score in found if key is not None]
        if projection is None:
            return hits
        by_code: dict[int, list[str]] = {}
        for code, memory_id, _ in hits:
            by_code.setdefault(code, []).append(memory_id)
        exact_hits = exact(by_code)
        exact_hits.sort(key=lambda t: -t[2])
        return exact_hits[:n]
