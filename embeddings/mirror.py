"""A namespace's vectors held in memory, and their exact search.

Below ~20k vectors one matrix-vector product (~1 ms at 20k x 384 here) beats a round trip
through Chroma's HNSW, and gives exact rather than approximate neighbours. A partition keeps a
`Mirror` while it is that small (`RankingSettings.mirror_max`); past it, Chroma answers.

Kinds are stored as small integer codes (`KIND_CODES`), here and as the BM25 index's groups, so
a kind filter is one `np.isin` over an int16 column.
"""

from __future__ import annotations

import numpy as np

from memvet.memory.kinds import Kind

KIND_CODES: dict[Kind, int] = {kind: code for code, kind in enumerate(Kind)}


class Mirror:
    """A namespace's vectors as float32 rows, with their ids and kind codes, for exact search."""

    def __init__(self, dimension: int) -> None:
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.matrix = np.zeros((64, dimension), dtype=np.float32)
        self.kinds = np.zeros(64, dtype=np.int16)

    def __len__(self) -> int:
        return len(self.ids)

    def set(self, memory_id: str, vector: np.ndarray, kind: Kind) -> None:
        """Add or overwrite one memory's row (the matrix doubles when full)."""
        row = self.row_of.get(memory_id)
        if row is None:
            row = len(self.ids)
            if row == len(self.matrix):
                self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
                self.kinds = np.concatenate([self.kinds, np.zeros_like(self.kinds)])
            self.ids.append(memory_id)
            self.row_of[memory_id] = row
        self.matrix[row] = vector
        self.kinds[row] = KIND_CODES[kind]

    def remove(self, memory_id: str) -> None:
        """Drop one memory's row (unknown ids are ignored)."""
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
        """The `n` rows (of `kinds`, if given) most cosine-similar to `qvec`, unordered."""
        count = len(self.ids)
        sims = self.matrix[:count] @ qvec
        rows = np.arange(count)
        if kinds is not None:
            rows = rows[np.isin(self.kinds[:count], [KIND_CODES[k] for k in kinds])]
            sims = sims[rows]
        if len(rows) > n:
            top = np.argpartition(-sims, n - 1)[:n]
            rows, sims = rows[top], sims[top]
        return [(self.ids[r], float(v)) for r, v in zip(rows, sims, strict=True)]

    def cosines(self, qvec: np.ndarray, memory_ids: list[str]) -> list[tuple[str, float]]:
        """The cosine of `qvec` with each of these memories that has a row here."""
        rows = [(i, self.row_of[i]) for i in memory_ids if i in self.row_of]
        if not rows:
            return []
        sims = self.matrix[[r for _, r in rows]] @ qvec
        return [(i, float(v)) for (i, _), v in zip(rows, sims, strict=True)]
