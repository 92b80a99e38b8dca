"""The second look: each statement's memorable score read again beside the rest of its
conversation.

The linear heads (model.py) judge a statement by its words, its neighbours' words and three
vectors. They cannot see how it compares with the rest of the excerpt: the surest statement of
a 30-message stretch of tool chatter is a better bet than a middling one in a message full of
middling ones, a lesson after a story counts more when the story scored high, and a message
with one clear statement rarely holds a second. A small gradient-boosted forest over the first
scores and where they sit (`context_features`) gives the final P(memorable). It is fitted on
out-of-fold first scores (train.py), so at serving time it sees the kind of scores it was
fitted on: ones from a model that never saw the conversation.

The forest is a handful of flat arrays (`Forest`), walked with numpy for every row and tree at
once, so serving needs neither scikit-learn nor a pickle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memvet.extraction.learned.statements import Statement

KIND_COUNT = 6
RESCORE_FEATURES = (
    "logit", "memorable",
    *(f"kind_{i}" for i in range(KIND_COUNT)),
    *(f"message_kind_{i}" for i in range(KIND_COUNT)),
    "message_others_max", "message_others_mean", "message_others",
    "other_side_max", "previous", "next",
    "excerpt_max", "share_of_max", "rank", "rank_capped",
    "messages", "statements", "compaction", "role_user", "position", "over_half",
)


def context_features(stmts: Sequence[Statement], memorable: np.ndarray, kinds: np.ndarray, *,
                     compaction: bool) -> np.ndarray:
    """One row of RESCORE_FEATURES per statement, from the first scores of all of them."""
    n = len(stmts)
    x = np.zeros((n, len(RESCORE_FEATURES)), dtype=np.float64)
    if n == 0:
        return x
    m = np.asarray(memorable, dtype=np.float64)
    k = np.asarray(kinds, dtype=np.float64)
    message = np.array([s.message for s in stmts])
    members: dict[int, np.ndarray] = {
        int(i): np.flatnonzero(message == i) for i in np.unique(message)}
    rank = np.empty(n)
    rank[np.argsort(-m, kind="stable")] = np.arange(n)
    top = float(m.max())
    clipped = np.clip(m, 1e-5, 1 - 1e-5)
    x[:, 0] = np.log(clipped / (1 - clipped))
    x[:, 1] = m
    x[:, 2:8] = k
    for idx in members.values():
        weights = m[idx]
        x[idx, 8:14] = (k[idx] * weights[:, None]).sum(axis=0) / max(float(weights.sum()), 1e-6)
        if len(idx) > 1:
            for j in idx:
                others = m[idx[idx != j]]
                x[j, 14] = others.max()
                x[j, 15] = others.mean()
        x[idx, 16] = len(idx) - 1
    for i, s in enumerate(stmts):
        other = members.get(s.message + 1 if s.role == "assistant" else s.message - 1)
        x[i, 17] = m[other].max() if other is not None else 0.0
        if i > 0 and stmts[i - 1].message == s.message:
            x[i, 18] = m[i - 1]
        if i + 1 < n and stmts[i + 1].message == s.message:
            x[i, 19] = m[i + 1]
        x[i, 27] = s.role == "user"
        x[i, 28] = s.position / max(1, s.count)
    x[:, 20] = top
    x[:, 21] = m / max(top, 1e-6)
    x[:, 22] = rank
    x[:, 23] = np.minimum(rank, 10)
    x[:, 24] = np.log1p(len(members))
    x[:, 25] = np.log1p(n)
    x[:, 26] = compaction
    x[:, 29] = int((m > 0.5).sum())
    return x


@dataclass(frozen=True)
class Forest:
    """Binary gradient-boosted trees as flat arrays: node i tests x[feature[i]] <= threshold[i]
    and goes to left[i] or right[i] (global node indices) until a leaf, whose value adds to
    the log-odds."""

    feature: np.ndarray  # int32, per node
    threshold: np.ndarray  # float64, per node
    left: np.ndarray  # int32, per node
    right: np.ndarray  # int32, per node
    value: np.ndarray  # float64, per node (leaves only count)
    leaf: np.ndarray  # bool, per node
    roots: np.ndarray  # int32, per tree
    depth: int
    baseline: float

    def probability(self, x: np.ndarray) -> np.ndarray:
        """P(positive) for each row of x, every tree walked at once."""
        if len(x) == 0:
            return np.zeros(0)
        node = np.repeat(self.roots[None, :], len(x), axis=0)
        rows = np.arange(len(x))[:, None]
        for _ in range(self.depth):
            go_left = x[rows, self.feature[node]] <= self.threshold[node]
            child = np.where(go_left, self.left[node], self.right[node])
            node = np.where(self.leaf[node], node, child)
        z = np.clip(self.baseline + self.value[node].sum(axis=1), -40, 40)
        out: np.ndarray = 1.0 / (1.0 + np.exp(-z))
        return out

    def rescore(self, stmts: Sequence[Statement], memorable: np.ndarray, kinds: np.ndarray, *,
                compaction: bool) -> np.ndarray:
        return self.probability(
            context_features(stmts, memorable, kinds, compaction=compaction))

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}_feature": self.feature, f"{prefix}_threshold": self.threshold,
                f"{prefix}_left": self.left, f"{prefix}_right": self.right,
                f"{prefix}_value": self.value, f"{prefix}_leaf": self.leaf,
                f"{prefix}_roots": self.roots, f"{prefix}_depth": np.array(self.depth),
                f"{prefix}_baseline": np.array(self.baseline),
                f"{prefix}_features": np.array(RESCORE_FEATURES)}

    @classmethod
    def from_arrays(cls, d: dict[str, Any], prefix: str) -> Forest:
        """The forest saved by `arrays`; ValueError when the arrays do not make one."""
        if tuple(str(s) for s in d[f"{prefix}_features"]) != RESCORE_FEATURES:
            raise ValueError("its rescorer was trained on other features")
        forest = cls(
            feature=d[f"{prefix}_feature"].astype(np.int32),
            threshold=d[f"{prefix}_threshold"].astype(np.float64),
            left=d[f"{prefix}_left"].astype(np.int32),
            right=d[f"{prefix}_right"].astype(np.int32),
            value=d[f"{prefix}_value"].astype(np.float64),
            leaf=d[f"{prefix}_leaf"].astype(bool),
            roots=d[f"{prefix}_roots"].astype(np.int32),
            depth=int(d[f"{prefix}_depth"]), baseline=float(d[f"{prefix}_baseline"]))
        nodes = len(forest.feature)
        if not all(len(a) == nodes for a in (forest.threshold, forest.left, forest.right,
                                              forest.value, forest.leaf)):
            raise ValueError("its rescorer's node arrays differ in length")
        inner = ~forest.leaf
        if (nodes == 0 or forest.depth < 0 or len(forest.roots) == 0
                or forest.roots.min() < 0 or forest.roots.max() >= nodes
                or (inner.any() and (
                    forest.feature[inner].min() < 0
                    or forest.feature[inner].max() >= len(RESCORE_FEATURES)
                    or min(forest.left[inner].min(), forest.right[inner].min()) < 0
                    or max(forest.left[inner].max(), forest.right[inner].max()) >= nodes))):
            raise ValueError("its rescorer's trees point outside themselves")
        if not (np.isfinite(forest.value).all() and np.isfinite(forest.baseline)):
            raise ValueError("its rescorer holds non-finite values")
        return forest
