"""Build the adapters from Settings and hand them to MemoryService.

The only place that knows every part. Nothing here runs at import time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from sqlalchemy.engine import Engine

from memvet.api.settings import Settings
from memvet.memory.errors import DataDirLocked, MemvetError, ValidationError
from memvet.memory.events import LocalEventBus, PostgresEventBus
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind
from memvet.memory.ports import Embedder, EmbeddingModel, MemoryIndex
from memvet.memory.service import MemoryService
from memvet.memory.store.engine import make_engine
from memvet.memory.store.migrate import upgrade

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """What a running memvet holds: the service and what must be closed with it."""

    settings: Settings
    service: MemoryService
    bus: LocalEventBus
    lock: FileLock | None = None
    closers: list[Any] = field(default_factory=list)
    closed: bool = False

    def close(self) -> None:
        """Close everything once (a second call does nothing)."""
        if self.closed:
            return
        self.closed = True
        self.service.close()
        self.bus.close()
        for close in reversed(self.closers):
            try:
                close()
            except Exception:
                log.exception("closing %r failed", close)
        self.service.engine.dispose()
        if self.lock is not None:
            self.lock.release()


def lock_data_dir(settings: Settings) -> FileLock | None:
    """The embedded store belongs to one server: a second one on the same dir refuses."""
    if not settings.embedded:
        return None
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(settings.data_dir / "server.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise DataDirLocked(
            f"another memvet server is already using {settings.data_dir}; stop it, or give "
            "this one its own --data-dir (several workers need PostgreSQL and a Chroma server)"
        ) from None
    return lock


def configured_model_id(settings: Settings) -> str:
    """The id of the model the settings ask for (hashing a local model's files, not loading it)."""
    if settings.embedder == "fake":
        from memvet.embeddings.fake import FakeEmbedder

        return FakeEmbedder().model_id
    if settings.embedding_model:
        from memvet.embeddings.model import local_model_id

        return local_model_id(Path(settings.embedding_model))
    from memvet.embeddings.model import MODEL_ID

    return MODEL_ID


def make_embedder(settings: Settings, model_path: str | None = None) -> Embedder:
    """The configured embedding model (or the local model at `model_path`), loaded offline.

    The packaged model runs on ONNX unless MEMVET_EMBEDDER=torch; a local model runs on
    sentence-transformers (its pooling is its own, which the ONNX export does not know)."""
    if settings.embedder == "fake":
        from memvet.embeddings.fake import FakeEmbedder

        return FakeEmbedder()
    path = model_path if model_path is not None else settings.embedding_model
    if path:
        from memvet.embeddings.model import SentenceTransformerEmbedder

        if not Path(path).is_dir():
            raise EmbeddingModelMissing(
                f"no embedding model directory at {path}; MEMVET_EMBEDDING_MODEL must name a "
                "local sentence-transformers model (nothing is downloaded)")
        return SentenceTransformerEmbedder(model_path=Path(path))
    from memvet.embeddings.onnx import make_embedder as make

    return make(settings.cache_dir / "models", prefer_onnx=settings.embedder == "onnx")


class EmbeddingModelMissing(MemvetError):
    """The embedding model the settings (or the recall index) name cannot be loaded here."""

    code = "EMBEDDING_MODEL_MISSING"


def serving_model(settings: Settings, engine: Engine, client: Any) -> EmbeddingModel | None:
    """The model the recall index serves when it is not the configured one, else None.

    What the database records wins: a new MEMVET_EMBEDDING_MODEL takes `memvet reindex`, and
    until that completes the old model (and its collections) keep serving. With nothing
    recorded (a data dir from before models could be chosen), collections of the packaged
    model are what serves."""
    from memvet.memory.store import models

    configured = configured_model_id(settings)
    with engine.connect() as conn:
        active = models.active(conn)
    if active is None and client is not None:
        from memvet.embeddings.chroma import stored_models
        from memvet.embeddings.model import DIMENSION, MODEL_ID

        held = stored_models(client)
        if held and configured not in held and MODEL_ID in held:
            active = EmbeddingModel(MODEL_ID, DIMENSION, None)
    if active is None or active.model_id == configured:
        return None
    log.warning(
        "the recall index serves %s, not the configured %s: run `memvet reindex` to switch "
        "(recall keeps using %s until the new collections are complete)",
        active.model_id, configured, active.model_id)
    return active


def embedder_for(settings: Settings, model: EmbeddingModel) -> Embedder:
    """Load the recorded model the recall index serves (it must still be on this machine)."""
    from memvet.embeddings.model import MODEL_ID

    if model.model_id == MODEL_ID:
        return make_embedder(settings.model_copy(update={"embedding_model": None}))
    if model.path is None or not Path(model.path).is_dir():
        raise EmbeddingModelMissing(
            f"the recall index was built with {model.model_id}, which is no longer at "
            f"{model.path}; put it back, or run `memvet reindex` to rebuild the index with "
            "the configured model")
    embedder = make_embedder(settings, model.path)
    if embedder.model_id != model.model_id:
        raise EmbeddingModelMissing(
            f"the model at {model.path} is now {embedder.model_id}, not the "
            f"{model.model_id} the recall index was built with; run `memvet reindex`")
    return embedder


def model_record(embedder: Embedder, settings: Settings) -> EmbeddingModel:
    """What the database records of a loaded model: id, dimension, and its directory."""
    path = getattr(embedder, "model_path", None)
    return EmbeddingModel(embedder.model_id, int(embedder.dimension),
                          str(path) if path is not None else None)


def make_client(settings: Settings) -> Any:
    from memvet.embeddings.chroma import make_chroma_client

    return make_chroma_client(
        path=None if settings.chroma_url else settings.data_dir / "chroma",
        url=settings.chroma_url,
    )


def make_index(settings: Settings, embedder: Embedder, client: Any = None) -> MemoryIndex:
    """The recall index on `client`, or on a client of its own (closed with the index)."""
    from memvet.embeddings.index import ChromaMemoryIndex

    if client is not None:
        return ChromaMemoryIndex(client, embedder)
    return ChromaMemoryIndex(make_client(settings), embedder, owns_client=True)


def make_vectors(embedder: Embedder, engine: Engine) -> Embedder:
    """The embedder the index and the matcher share: each text embedded once per model, its
    vector kept in the database (candidate_vectors)."""
    from memvet.embeddings.vectors import EmbeddingCache
    from memvet.memory.store.vectors import CandidateVectors

    if isinstance(embedder, EmbeddingCache):
        return embedder
    return EmbeddingCache(embedder, CandidateVectors(engine))


def make_matcher(settings: Settings, embedder: Embedder) -> Any:
    from memvet.embeddings.equivalence import EmbeddingCandidateMatcher

    return EmbeddingCandidateMatcher(embedder)


def default_equivalence_threshold() -> float:
    from memvet.embeddings.equivalence import DEFAULT_EQUIVALENCE_THRESHOLD

    return float(DEFAULT_EQUIVALENCE_THRESHOLD)


def make_extractor(settings: Settings, embedder: Embedder | None = None) -> Any:
    """The configured extractor. The learned one (and the LLM's fallback) reads the packaged
    MiniLM's vectors: it shares `embedder` when that is the packaged model, else loads it."""
    from memvet.extraction import build_extractor

    packaged = None
    if settings.extractor.strip().lower() in ("learned", "llm"):
        packaged = packaged_embedder(settings, embedder)
    return build_extractor(
        settings.extractor,
        embedder=packaged,
        model_path=settings.extractor_model,
        llm_base_url=settings.llm_base_url,
        llm_model=settings.llm_model,
        llm_api_key=settings.llm_api_key,
        llm_timeout=settings.llm_timeout,
        llm_fallback=settings.llm_fallback,
    )


def packaged_embedder(settings: Settings, embedder: Embedder | None = None) -> Embedder:
    """The packaged MiniLM: `embedder` itself when it is that model, else a fresh one."""
    from memvet.embeddings.model import MODEL_ID

    if embedder is not None and embedder.model_id == MODEL_ID:
        return embedder
    return make_embedder(settings.model_copy(update={
        "embedding_model": None,
        "embedder": "onnx" if settings.embedder == "fake" else settings.embedder}))


def check_extractor(settings: Settings) -> None:
    """Refuse to start with an extractor that cannot work (an unusable model file, missing LLM
    settings): a clear error before the server binds, not at the first turn."""
    from memvet.extraction import EXTRACTORS
    from memvet.extraction.learned.model import DEFAULT_MODEL_PATH, ExtractorModel

    name = settings.extractor.strip().lower()
    if name not in EXTRACTORS:
        raise ValidationError(
            f"unknown extractor {name[:40]!r}; choose one of: {', '.join(EXTRACTORS)}")
    if name in ("learned", "llm"):
        ExtractorModel.load(settings.extractor_model or DEFAULT_MODEL_PATH)


def kind_weights(settings: Settings) -> dict[Kind, float]:
    weights = dict(DEFAULT_KIND_WEIGHTS)
    weights[Kind.DECISION] = settings.decision_weight
    weights[Kind.POSTMORTEM] = settings.postmortem_weight
    return weights


def build_runtime(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    index: MemoryIndex | None = None,
    with_index: bool = True,
    with_extractor: bool = True,
    lock: bool = True,
) -> Runtime:
    """Open the store (migrating it), the index, the matcher, the extractor and the bus."""
    data_lock = lock_data_dir(settings) if lock else None
    client = None
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = make_engine(settings.db_url)
        upgrade(engine)
        bus: LocalEventBus
        announce = None
        if engine.dialect.name == "postgresql":
            pg_bus = PostgresEventBus(_libpq_url(settings.db_url))
            bus, announce = pg_bus, pg_bus.announce_index
        else:
            bus = LocalEventBus()
        matcher = None
        if with_index:
            if embedder is None:
                client = make_client(settings) if index is None else None
                serving = serving_model(settings, engine, client)
                embedder = (embedder_for(settings, serving) if serving is not None
                            else make_embedder(settings))
            shared = make_vectors(embedder, engine)
            index = index or make_index(settings, shared, client)
            if settings.semantic_equivalence:
                matcher = make_matcher(settings, shared)
        threshold = settings.equivalence_threshold
        if threshold is None:
            threshold = default_equivalence_threshold() if matcher is not None else 1.0
        service = MemoryService(
            engine=engine,
            index=index if with_index else None,
            matcher=matcher,
            extractor=make_extractor(settings, embedder) if with_extractor else None,
            bus=bus,
            announce_index=announce if with_index else None,
            equivalence_threshold=threshold,
            kind_weights=kind_weights(settings),
            default_archive_days=settings.archive_days,
            default_persona=settings.default_persona,
            extraction_workers=settings.extraction_workers,
        )
        if with_index and embedder is not None:
            service.record_index_model(model_record(embedder, settings))
        refresh = getattr(index, "refresh", None)
        if isinstance(bus, PostgresEventBus) and with_index and refresh is not None:
            # Workers share the Chroma server; what another one writes, this one re-reads.
            bus.on_index_change(refresh)
        return Runtime(settings=settings, service=service, bus=bus, lock=data_lock,
                       closers=[client.close] if client is not None else [])
    except BaseException:
        if client is not None:
            client.close()
        if data_lock is not None:
            data_lock.release()
        raise


def _libpq_url(url: str) -> str:
    """psycopg wants postgresql://, SQLAlchemy URLs may say postgresql+psycopg://."""
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url
