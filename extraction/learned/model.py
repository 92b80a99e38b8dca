"""The trained model: vocabularies and linear heads over the features of features.py.

Heads (each a logistic regression, coefficients over the concatenated feature blocks):
`memorable` (worth remembering or not), `kind` (softmax over the six kinds), `persona` (a
preference about the person rather than the project), and `prefilter` (memorable, from the
word blocks alone: it picks which statements of a very long stretch get embedded at all).
`rescorer` (rescore.py) reads each statement's memorable score again beside the rest of its
conversation and gives the final one. `params` holds the decoding settings train.py chose on
held-out folds (thresholds, caps) and the calibration of the confidence.

The file is `model.npz` beside this module: numpy arrays only, loaded with
allow_pickle=False. A missing, truncated or inconsistent file raises ExtractorModelError at
load, which the server does at start-up.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from memvet.extraction.learned.features import (
    SHAPE_FEATURES,
    Vocabulary,
    dense_block,
    neighbours,
    other_side,
    whole_message,
)
from memvet.extraction.learned.rescore import Forest
from memvet.extraction.learned.statements import Statement
from memvet.memory.errors import ConfigurationError
from memvet.memory.kinds import Kind

FORMAT = 3
DEFAULT_MODEL_PATH = Path(__file__).resolve().with_name("model.npz")
KINDS = tuple(Kind)


class ExtractorModelError(ConfigurationError):
    """The learned extractor's model file is missing or unusable."""


@dataclass
class Heads:
    memorable_w: np.ndarray
    memorable_b: float
    kind_w: np.ndarray  # (6, F)
    kind_b: np.ndarray  # (6,)
    persona_w: np.ndarray
    persona_b: float
    prefilter_w: np.ndarray  # over the word blocks only
    prefilter_b: float


@dataclass
class ExtractorModel:
    """Everything the learned extractor needs besides the embedder."""

    embedder_model_id: str
    dimension: int
    text: Vocabulary
    other: Vocabulary
    around: Vocabulary
    message: Vocabulary
    heads: Heads
    params: dict[str, Any] = field(default_factory=dict)
    rescorer: Forest | None = None  # None only while training fits the first stage

    # ------------------------------------------------------------------ features
    @property
    def embed_tokens(self) -> int | None:
        """How many of a statement's tokens are embedded (None: all): train.py's choice."""
        value = self.params.get("embed_tokens")
        return int(value) if value else None

    @property
    def sparse_width(self) -> int:
        return (len(self.text.terms) + len(self.other.terms) + len(self.around.terms)
                + len(self.message.terms))

    @property
    def width(self) -> int:
        return self.sparse_width + 3 * self.dimension + len(SHAPE_FEATURES)

    @property
    def _vocabularies(self) -> tuple[Vocabulary, ...]:
        return (self.text, self.other, self.around, self.message)

    @staticmethod
    def _documents(stmts: Sequence[Statement]) -> tuple[list[str], ...]:
        """What each vocabulary reads of each statement, in `_vocabularies` order."""
        return ([s.text for s in stmts], [other_side(s) for s in stmts],
                [neighbours(stmts, k) for k in range(len(stmts))],
                [whole_message(stmts, k) for k in range(len(stmts))])

    def word_blocks(self, stmts: Sequence[Statement]) -> list[sparse.csr_matrix]:
        """Blocks 1-3 (no embedding needed), one matrix per vocabulary."""
        return [vocab.transform(docs)
                for vocab, docs in zip(self._vocabularies, self._documents(stmts), strict=True)]

    def word_features(self, stmts: Sequence[Statement]) -> sparse.csr_matrix:
        """Blocks 1-3 side by side."""
        return sparse.hstack(self.word_blocks(stmts)).tocsr()

    def features(self, stmts: Sequence[Statement], vectors: np.ndarray, *, compaction: bool,
                 workspace: str | None) -> sparse.csr_matrix:
        dense = dense_block(stmts, vectors, compaction=compaction, workspace=workspace)
        return sparse.hstack([self.word_features(stmts), sparse.csr_matrix(dense)]).tocsr()

    # ------------------------------------------------------------------ heads
    def predict(self, x: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P(memorable), P(kind) n×6 in Kind order, P(persona | preference)) of feature rows."""
        return self._heads(np.asarray(x @ self._stacked))

    def predict_statements(self, stmts: Sequence[Statement], vectors: np.ndarray, *,
                           compaction: bool, workspace: str | None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`predict(features(...))`, block by block: no wide matrix is assembled (the turn
        pass's own share of its latency is mostly this). The first stage: `rescore` gives the
        second look."""
        w = self._stacked
        z = dense_block(stmts, vectors, compaction=compaction, workspace=workspace) @ w[
            self.sparse_width:]
        start = 0
        for vocab, docs in zip(self._vocabularies, self._documents(stmts), strict=True):
            z += vocab.project(docs, w[start:start + len(vocab.terms)])
            start += len(vocab.terms)
        return self._heads(z)

    @cached_property
    def _stacked(self) -> np.ndarray:
        """The three heads' weights as one contiguous F×8 matrix: memorable, the six kinds,
        persona (one product per block instead of three, and no transposed copy a call)."""
        h = self.heads
        return np.ascontiguousarray(
            np.vstack([h.memorable_w, h.kind_w, h.persona_w]).T, dtype=np.float32)

    def _heads(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        h = self.heads
        memorable = _sigmoid(z[:, 0] + h.memorable_b)
        logits = z[:, 1:7] + h.kind_b
        logits -= logits.max(axis=1, keepdims=True)
        kind = np.exp(logits)
        kind /= kind.sum(axis=1, keepdims=True)
        persona = _sigmoid(z[:, 7] + h.persona_b)
        return memorable, kind, persona

    def rescore(self, stmts: Sequence[Statement], first: np.ndarray, kinds: np.ndarray, *,
                compaction: bool) -> np.ndarray:
        """P(memorable) after the rescorer's second look at the linear heads' `first` scores
        (those unchanged while training fits the first stage alone)."""
        if self.rescorer is None:
            return first
        return self.rescorer.rescore(stmts, first, kinds, compaction=compaction)

    def prefilter(self, words: sparse.csr_matrix) -> np.ndarray:
        return _sigmoid(words @ self.heads.prefilter_w + self.heads.prefilter_b)

    def confidence(self, score: float) -> float:
        """A group's score mapped to the chance it is a right candidate (Platt, fitted on
        held-out folds)."""
        a = float(self.params.get("platt_a", 1.0))
        b = float(self.params.get("platt_b", 0.0))
        z = min(max(score, 1e-6), 1 - 1e-6)
        return 1.0 / (1.0 + math.exp(-(a * math.log(z / (1 - z)) + b)))

    # ------------------------------------------------------------------ file
    def save(self, path: Path) -> None:
        if self.rescorer is None:
            raise ValueError("a model is saved with its rescorer (train.py fits it)")
        h = self.heads
        arrays: dict[str, Any] = {
            "format": np.array(FORMAT),
            "embedder_model_id": np.array(self.embedder_model_id),
            "dimension": np.array(self.dimension),
            "kinds": np.array([k.value for k in KINDS]),
            "shape_features": np.array(SHAPE_FEATURES),
            "params": np.array(json.dumps(self.params, sort_keys=True)),
            "memorable_w": h.memorable_w, "memorable_b": np.array(h.memorable_b),
            "kind_w": h.kind_w, "kind_b": h.kind_b,
            "persona_w": h.persona_w, "persona_b": np.array(h.persona_b),
            "prefilter_w": h.prefilter_w, "prefilter_b": np.array(h.prefilter_b),
            **self.rescorer.arrays("rescore"),
        }
        for name, vocab in (("text", self.text), ("other", self.other), ("around", self.around),
                            ("message", self.message)):
            arrays[f"{name}_terms"] = np.array(vocab.terms)
            arrays[f"{name}_idf"] = vocab.idf
            arrays[f"{name}_ngram"] = np.array(vocab.ngram)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path = DEFAULT_MODEL_PATH) -> ExtractorModel:
        """Read and check a model file; ExtractorModelError says what is wrong with it."""
        if not path.is_file():
            raise ExtractorModelError(
                f"the learned extractor's model file {path} is missing; reinstall memvet, "
                "run `make train-extractor`, or choose another extractor (MEMVET_EXTRACTOR)")
        try:
            with np.load(path, allow_pickle=False) as f:
                data = {k: f[k] for k in f.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ExtractorModelError(
                f"the learned extractor's model file {path} cannot be read ({exc}); "
                "reinstall memvet or run `make train-extractor`") from exc
        try:
            return cls._from_arrays(data)
        except (KeyError, ValueError, TypeError) as exc:
            raise ExtractorModelError(
                f"the learned extractor's model file {path} is not a usable model ({exc}); "
                "reinstall memvet or run `make train-extractor`") from exc

    @classmethod
    def _from_arrays(cls, d: dict[str, np.ndarray]) -> ExtractorModel:
        if int(d["format"]) != FORMAT:
            raise ValueError(f"format {int(d['format'])}, this memvet reads format {FORMAT}")
        if [str(k) for k in d["kinds"]] != [k.value for k in KINDS]:
            raise ValueError("its kinds are not memvet's six")
        if tuple(str(s) for s in d["shape_features"]) != SHAPE_FEATURES:
            raise ValueError("it was trained on other shape features")
        vocabs = {
            name: Vocabulary([str(t) for t in d[f"{name}_terms"]],
                             d[f"{name}_idf"].astype(np.float32), int(d[f"{name}_ngram"]))
            for name in ("text", "other", "around", "message")
        }
        model = cls(
            embedder_model_id=str(d["embedder_model_id"]), dimension=int(d["dimension"]),
            text=vocabs["text"], other=vocabs["other"], around=vocabs["around"],
            message=vocabs["message"],
            heads=Heads(
                memorable_w=d["memorable_w"].astype(np.float32),
                memorable_b=float(d["memorable_b"]),
                kind_w=d["kind_w"].astype(np.float32), kind_b=d["kind_b"].astype(np.float32),
                persona_w=d["persona_w"].astype(np.float32), persona_b=float(d["persona_b"]),
                prefilter_w=d["prefilter_w"].astype(np.float32),
                prefilter_b=float(d["prefilter_b"]),
            ),
            params=json.loads(str(d["params"])),
            rescorer=Forest.from_arrays(d, "rescore"),
        )
        tokens = model.params.get("embed_tokens")
        if tokens is not None and (not isinstance(tokens, int) or not 3 <= tokens <= 512):
            raise ValueError(f"its embed_tokens ({tokens!r}) is not a token count")
        h, width = model.heads, model.width
        if (h.memorable_w.shape != (width,) or h.kind_w.shape != (len(KINDS), width)
                or h.kind_b.shape != (len(KINDS),) or h.persona_w.shape != (width,)
                or h.prefilter_w.shape != (model.sparse_width,)):
            raise ValueError("its weights do not fit its vocabularies")
        for vocab in vocabs.values():
            if vocab.idf.shape != (len(vocab.terms),):
                raise ValueError("a vocabulary and its IDF differ in length")
        if not all(np.isfinite(w).all() for w in (h.memorable_w, h.kind_w, h.persona_w)):
            raise ValueError("it holds non-finite weights")
        return model


def _sigmoid(z: Any) -> np.ndarray:
    z = np.clip(np.asarray(z, dtype=np.float64).ravel(), -40, 40)
    out: np.ndarray = 1.0 / (1.0 + np.exp(-z))
    return out
