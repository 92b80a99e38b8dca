"""Embed each text once per model: `EmbeddingCache`, the Embedder the matcher and the index share.

A text's vector is looked up, in order, in a small in-process LRU, then in the `VectorStore`
(memory/store/vectors.py: the `candidate_vectors` table, keyed by model id and text hash), and
only then embedded, in large batches of distinct texts (the embedders sort a batch by length,
so large batches pad least). So a candidate embedded at intake is not embedded again when it is
approved, imported memories are not embedded again for the matcher, and a server restart reads
the queue's vectors instead of embedding them.

Fresh vectors are written to the store by `flush()` (and by `vectors(..., save=True)`), which
callers run outside database writes: the store writes in a transaction of its own, which on
SQLite would wait for a write the same thread holds open. Until then they wait in memory.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from memvet.memory.ports import Embedder, VectorStore, text_hash

log = logging.getLogger(__name__)

DEFAULT_BATCH = 1024  # texts per call into the model
DEFAULT_MEMORY = 8192  # vectors kept in process (~12 MB at 384 dimensions)


class EmbeddingCache:
    """An `Embedder` that reads vectors back before it embeds; see the module docstring."""

    def __init__(
        self,
        embedder: Embedder,
        store: VectorStore | None = None,
        *,
        memory_size: int = DEFAULT_MEMORY,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        self.inner = embedder
        # an embedder may hand back an array directly (onnx.OnnxEmbedder): no Python floats
        self._embed_array: Callable[[list[str]], np.ndarray] | None = getattr(
            embedder, "embed_array", None)
        self.store = store
        self.model_id = embedder.model_id
        self.dimension = int(embedder.dimension)
        self.batch_size = batch_size
        self.embedded = 0  # texts this cache had to embed (for tests and benchmarks)
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_size = memory_size
        self._unsaved: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ Embedder
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The `Embedder` port: unit vectors as lists (see `vectors` for the array form)."""
        return self.vectors(texts).tolist()  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ arrays
    def vectors(
        self,
        texts: Sequence[str],
        *,
        save: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Row i is texts[i]'s vector (float32). With `save`, fresh ones are stored at once;
        `progress` hears how many texts were embedded after each batch."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        hashes = [text_hash(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for h in hashes:
                vec = self._memory.get(h)
                if vec is not None:
                    self._memory.move_to_end(h)
                    found[h] = vec
                elif (pending := self._unsaved.get(h)) is not None:
                    found[h] = pending
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing and self.store is not None:
            try:
                stored = self.store.load(self.model_id, missing)
            except Exception:  # the store is an optimisation: embed what it cannot give
                log.exception("reading stored vectors failed; embedding instead")
                stored = {}
            for h, raw in stored.items():
                vec = np.frombuffer(raw, dtype="<f4").astype(np.float32)
                if len(vec) == self.dimension:  # a vector of another shape is not this model's
                    found[h] = vec
            self._remember({h: found[h] for h in missing if h in found}, unsaved=False)
        todo: dict[str, str] = {}
        for h, text in zip(hashes, texts, strict=True):
            if h not in found:
                todo.setdefault(h, text)
        if todo:
            keys = list(todo)
            for start in range(0, len(keys), self.batch_size):
                chunk = keys[start : start + self.batch_size]
                batch_texts = [todo[h] for h in chunk]
                fresh = np.asarray(
                    self._embed_array(batch_texts)
                    if self._embed_array is not None
                    else self.inner.embed(batch_texts),
                    dtype=np.float32,
                )
                if fresh.shape != (len(chunk), self.dimension):
                    raise ValueError(
                        f"embedder {self.model_id} returned {fresh.shape[-1]}-d vectors, "
                        f"not {self.dimension}-d"
                    )
                batch = dict(zip(chunk, fresh, strict=True))
                found.update(batch)
                self._remember(batch, unsaved=self.store is not None)
                self.embedded += len(chunk)
                if progress is not None:
                    progress(len(chunk))
        for row, h in enumerate(hashes):
            out[row] = found[h]
        if save:
            self.flush()
        return out

    def _remember(self, vectors: dict[str, np.ndarray], *, unsaved: bool) -> None:
        if not vectors:
            return
        with self._lock:
            if unsaved:
                self._unsaved.update(vectors)
            for h, vec in vectors.items():
                self._memory[h] = vec
                self._memory.move_to_end(h)
            while len(self._memory) > self._memory_size:
                self._memory.popitem(last=False)

    def flush(self) -> None:
        """Write vectors embedded since the last flush to the store (outside a DB write).

        A failure is logged and the vectors wait for the next flush: they are a cache."""
        if self.store is None:
            return
        with self._lock:
            if not self._unsaved:
                return
            batch, self._unsaved = self._unsaved, {}
        try:
            self.store.save(self.model_id, {h: v.astype("<f4").tobytes()
                                            for h, v in batch.items()})
        except Exception:
            log.exception("storing %d vectors failed; they wait for the next flush", len(batch))
            with self._lock:
                self._unsaved = {**batch, **self._unsaved}
