"""A deterministic, model-free embedder for fast tests: hashed bag-of-words vectors."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from memvet.embeddings.lexical import tokenize


class FakeEmbedder:
    """Hashed bag of words (bigrams at half weight) in signed slots: shared words, close vectors.

    Deterministic across processes and machines; no model, no I/O. Not semantic: use the real
    embedder for quality tests.
    """

    def __init__(self, dimension: int = 384, *, model_id: str | None = None) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self.dimension = dimension
        self.model_id = model_id or f"memvet-fake-bow-{dimension}"
        self.calls = 0  # how many embed() calls were made, for tests that count them

    def _slots(self, feature: str) -> list[tuple[int, float]]:
        """Two signed slots per feature, so one hash collision cannot cancel a shared word."""
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=16).digest()
        out = []
        for half in (digest[:8], digest[8:]):
            value = int.from_bytes(half, "little")
            out.append((value % self.dimension, 1.0 if (value >> 63) & 1 else -1.0))
        return out

    def truncate(self, texts: Sequence[str], max_tokens: int) -> list[str]:
        """Each text's first `max_tokens - 2` whitespace-separated words (its "tokens", two
        kept for the special ones a real model adds)."""
        keep = max(1, max_tokens - 2)
        return [text if len(text.split()) <= keep else " ".join(text.split()[:keep])
                for text in texts]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text (a fixed unit vector for texts with no tokens)."""
        self.calls += 1
        out: list[list[float]] = []
        for text in texts:
            vec = [0.0] * self.dimension
            tokens = tokenize(text)
            features = tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]
            for n, feature in enumerate(features):
                weight = 1.0 if n < len(tokens) else 0.5  # bigrams count half
                for slot, sign in self._slots(feature):
                    vec[slot] += sign * weight
            norm = math.sqrt(sum(v * v for v in vec))
            if norm == 0.0:
                vec[0], norm = 1.0, 1.0
            out.append([v / norm for v in vec])
        return out
