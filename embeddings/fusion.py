"""Fusing dense and lexical scores into one ranking.

Convex fusion of normalised scores, not reciprocal-rank fusion: RRF throws away how far ahead
a match is (a BM25 hit on a rare exact name and a weak one count alike), and on LoCoMo it
lands below BM25 alone. Here both scores are divided by the query's best (so 1.0 is "the best
match there is" on each side), then `alpha * dense + (1 - alpha) * lexical`. Recall
(`search.py`) computes the exact cosine for candidates only BM25 found, so every candidate has
both parts; a memory with no BM25 match scores 0 lexically. Measured on LoCoMo
(bench/locomo_recall.py): max-scaling with exact cosines is flat for alpha 0.4-0.7, while
min-max scaling with a 0 floor for missing cosines peaks narrowly and falls off fast.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def normalise_max(scores: Mapping[K, float]) -> dict[K, float]:
    """Scale non-negative scores by their maximum (all zero if the maximum is not positive)."""
    top = max(scores.values(), default=0.0)
    if top <= 0.0:
        return {k: 0.0 for k in scores}
    return {k: max(0.0, v) / top for k, v in scores.items()}


def normalise_minmax(scores: Mapping[K, float]) -> dict[K, float]:
    """Min-max scale to [0, 1]; a single score (or all equal) maps to 1."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi - lo < 1e-9:
        return {k: 1.0 for k in scores}
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def convex_fusion(
    dense: Mapping[K, float], lexical: Mapping[K, float], *, alpha: float
) -> dict[K, float]:
    """`alpha * dense / max(dense) + (1 - alpha) * lexical / max(lexical)` over both keys."""
    d = normalise_max(dense)
    lx = normalise_max(lexical)
    return {
        k: alpha * d.get(k, 0.0) + (1.0 - alpha) * lx.get(k, 0.0) for k in dense.keys() | lexical
    }


def rrf_fusion(
    dense: Mapping[K, float], lexical: Mapping[K, float], *, k: int = 60
) -> dict[K, float]:
    """Reciprocal-rank fusion, kept as the baseline the benchmark compares against."""
    out: dict[K, float] = {}
    for scores in (dense, lexical):
        ranked = sorted(scores, key=lambda key: -scores[key])
        for rank, key in enumerate(ranked):
            out[key] = out.get(key, 0.0) + 1.0 / (k + rank + 1)
    return out
