"""Chroma plumbing: the client factory and what a memvet collection is.

A namespace's collection is named by `collection_name` (reversible with `parse_collection_name`)
for one embedding model: the packaged model's collections carry no tag (`mv-w-shop-api-ns`, as
before models could be chosen), any other model's carry a short hash of its id
(`mv-w-shop-api-ns-1a2b3c4d`), so a new model's collections are built beside the old ones and
neither reads the other's. Each is built with `HnswSettings` and stamped
(`collection_metadata`) with the id and dimension of the model that made its vectors;
`same_model` tells whether a collection may be used with an embedder (`EmbeddingModelMismatch`
when not: models are never mixed). Chroma is always handed vectors; `ExplicitEmbeddingFunction`
stands in for its default embedding function.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from memvet.embeddings.model import MODEL_ID
from memvet.memory.errors import InvalidNamespace, MemvetError
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import Embedder

COLLECTION_PREFIX = "mv-"
_SUFFIX = "-ns"
_ESCAPES = {"_": "__", ".": "_d", "/": "_s"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
_SCOPES = {"persona": "p", "workspace": "w"}
_SCOPE_NAMES = {v: k for k, v in _SCOPES.items()}


def make_chroma_client(*, path: Path | None = None, url: str | None = None) -> Any:
    """An HttpClient for `url` (MEMVET_CHROMA_URL) if given, else a PersistentClient at `path`."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=True)
    if url:
        parsed = urlparse(url if "://" in url else f"http://{url}")
        return chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or (443 if parsed.scheme == "https" else 8000),
            ssl=parsed.scheme == "https",
            settings=settings,
        )
    if path is None:
        raise ValueError("make_chroma_client needs a data path or a server url")
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=settings)


def model_tag(model_id: str) -> str | None:
    """The suffix of a model's collection names: none for the packaged model, else a hash."""
    if model_id == MODEL_ID:
        return None
    return hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:8]


def collection_name(namespace: str, model_id: str = MODEL_ID) -> str:
    """The Chroma collection name for a namespace and model; reversible with
    `parse_collection_name`.

    `workspace:shop-api` -> `mv-w-shop-api-ns` (the packaged model) or
    `mv-w-shop-api-ns-1a2b3c4d` (another); `_`, `.`, `/` are escaped so the name stays within
    Chroma's alphabet, never holds `..`, and starts and ends alphanumeric.
    """
    ns = Namespace.parse(namespace)
    body = "".join(_ESCAPES.get(ch, ch) for ch in ns.name)
    tag = model_tag(model_id)
    return f"{COLLECTION_PREFIX}{_SCOPES[ns.scope.value]}-{body}{_SUFFIX}" + (
        f"-{tag}" if tag else ""
    )


# a tag is 8 hex digits and an untagged name ends in `-ns`, so the two never read alike
_NAME_RE = re.compile(r"^mv-([pw])-(.+)-ns(?:-([0-9a-f]{8}))?$")


def namespace_of(name: str) -> str | None:
    """The namespace a collection name stands for, or None if it is not one of ours."""
    parsed = parse_collection_name(name)
    return parsed[0] if parsed else None


def parse_collection_name(name: str) -> tuple[str, str | None] | None:
    """(namespace, model tag or None) of one of our collection names, else None."""
    match = _NAME_RE.match(name)
    if not match:
        return None
    scope, body, tag = match.groups()
    out, i = [], 0
    while i < len(body):
        pair = body[i : i + 2]
        if pair in _UNESCAPES:
            out.append(_UNESCAPES[pair])
            i += 2
        elif body[i] == "_":
            return None  # a lone '_' never comes out of collection_name
        else:
            out.append(body[i])
            i += 1
    try:
        return str(Namespace.parse(f"{_SCOPE_NAMES[scope]}:{''.join(out)}")), tag
    except InvalidNamespace:
        return None


META_NAMESPACE = "memvet_namespace"
META_MODEL = "memvet_model_id"
META_DIMENSION = "memvet_dimension"


class EmbeddingModelMismatch(MemvetError):
    """A collection holds vectors of another embedding model than the one configured."""

    code = "EMBEDDING_MODEL_MISMATCH"


@dataclass(frozen=True)
class HnswSettings:
    """Chroma HNSW parameters, chosen by bench/recall_latency.py (recall@10 vs exact)."""

    ef_search: int = 100
    max_neighbors: int = 16
    ef_construction: int = 100

    def configuration(self) -> dict[str, Any]:
        """The `configuration=` Chroma takes when it creates a collection."""
        return {
            "hnsw": {
                "space": "cosine",
                "ef_search": self.ef_search,
                "max_neighbors": self.max_neighbors,
                "ef_construction": self.ef_construction,
            }
        }


def collection_metadata(namespace: str, embedder: Embedder) -> dict[str, Any]:
    """What a new collection records: its namespace, and the model that makes its vectors."""
    return {
        META_NAMESPACE: namespace,
        META_MODEL: embedder.model_id,
        META_DIMENSION: int(embedder.dimension),
    }


def stored_models(client: Any) -> dict[str, int]:
    """{model id: how many collections} of every memvet collection on this Chroma."""
    found: dict[str, int] = {}
    for name in list_names(client):
        if parse_collection_name(name) is None:
            continue
        meta = client.get_collection(name).metadata or {}
        model = str(meta.get(META_MODEL, ""))
        found[model] = found.get(model, 0) + 1
    return found


def drop_other_models(client: Any, model_id: str) -> int:
    """Delete every memvet collection that is not `model_id`'s (by name); returns how many."""
    keep = model_tag(model_id)
    dropped = 0
    for name in list_names(client):
        parsed = parse_collection_name(name)
        if parsed is not None and parsed[1] != keep:
            client.delete_collection(name)
            dropped += 1
    return dropped


def list_names(client: Any) -> list[str]:
    """Every collection name on the client (Chroma returns names or collections by version)."""
    return [c if isinstance(c, str) else c.name for c in client.list_collections()]


def same_model(meta: Mapping[str, Any], embedder: Embedder) -> bool:
    """Whether a collection with this metadata holds vectors of `embedder`'s model and size."""
    if meta.get(META_MODEL) != embedder.model_id:
        return False
    return int(meta.get(META_DIMENSION, -1)) == int(embedder.dimension)


try:  # chromadb is a hard dependency of this package; the guard keeps import errors readable
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
except ImportError as exc:  # pragma: no cover
    raise ImportError("embeddings.chroma needs chromadb installed") from exc


class ExplicitEmbeddingFunction(EmbeddingFunction[Documents]):
    """Stands in for Chroma's default EF (which would download a model); delegates to ours.

    memvet always hands Chroma the vectors, so Chroma calls this only if a caller forgets to.
    """

    def __init__(self, embedder: Any = None, *, model_id: str = "", dimension: int = 0) -> None:
        self._embedder = embedder
        self._model_id = getattr(embedder, "model_id", model_id)
        self._dimension = getattr(embedder, "dimension", dimension)

    def __call__(self, input: Documents) -> Embeddings:  # noqa: A002 - Chroma's signature
        if self._embedder is None:
            raise RuntimeError("memvet passes embeddings explicitly; no embedder attached")
        import numpy as np

        texts: Sequence[str] = list(input)
        return [np.asarray(v, dtype=np.float32) for v in self._embedder.embed(texts)]

    @staticmethod
    def name() -> str:
        return "memvet-explicit"

    def get_config(self) -> dict[str, Any]:
        return {"model_id": self._model_id, "dimension": self._dimension}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ExplicitEmbeddingFunction:
        return ExplicitEmbeddingFunction(
            model_id=str(config.get("model_id", "")), dimension=int(config.get("dimension", 0))
        )

    def default_space(self) -> Any:
        return "cosine"

    def validate_config_update(
        self, old_config: dict[str, Any], new_config: dict[str, Any]
    ) -> None:
        return None
