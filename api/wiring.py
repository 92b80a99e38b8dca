"""Build the adapters from Settings and hand them to MemoryService.

The only place that knows every part. Nothing here runs at import time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from filelock import FileLock, Timeout

from memvet.api.settings import Settings
from memvet.memory.errors import DataDirLocked
from memvet.memory.events import LocalEventBus, PostgresEventBus
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind
from memvet.memory.ports import Embedder, MemoryIndex
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

    def close(self) -> None:
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


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "fake":
        from memvet.embeddings.fake import FakeEmbedder

        return FakeEmbedder()
    from memvet.embeddings.onnx import make_embedder as make

    return make(settings.cache_dir / "models", prefer_onnx=settings.embedder == "onnx")


def make_index(settings: Settings, embedder: Embedder) -> MemoryIndex:
    from memvet.embeddings.chroma import make_chroma_client
    from memvet.embeddings.index import ChromaMemoryIndex

    client = make_chroma_client(
        path=None if settings.chroma_url else settings.data_dir / "chroma",
        url=settings.chroma_url,
    )
    return ChromaMemoryIndex(client, embedder)


def make_matcher(settings: Settings, embedder: Embedder) -> Any:
    from memvet.embeddings.equivalence import EmbeddingCandidateMatcher

    return EmbeddingCandidateMatcher(embedder)


def default_equivalence_threshold() -> float:
    from memvet.embeddings.equivalence import DEFAULT_EQUIVALENCE_THRESHOLD

    return float(DEFAULT_EQUIVALENCE_THRESHOLD)


def make_extractor(settings: Settings) -> Any:
    from memvet.extraction import build_extractor

    return build_extractor(
        settings.extractor,
        llm_base_url=settings.llm_base_url,
        llm_model=settings.llm_model,
        llm_api_key=settings.llm_api_key,
        llm_timeout=settings.llm_timeout,
        llm_fallback=settings.llm_fallback,
    )


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
            embedder = embedder or make_embedder(settings)
            index = index or make_index(settings, embedder)
            if settings.semantic_equivalence:
                matcher = make_matcher(settings, embedder)
        threshold = settings.equivalence_threshold
        if threshold is None:
            threshold = default_equivalence_threshold() if matcher is not None else 1.0
        service = MemoryService(
            engine=engine,
            index=index if with_index else None,
            matcher=matcher,
            extractor=make_extractor(settings) if with_extractor else None,
            bus=bus,
            announce_index=announce if with_index else None,
            equivalence_threshold=threshold,
            kind_weights=kind_weights(settings),
            default_archive_days=settings.archive_days,
            default_persona=settings.default_persona,
            extraction_workers=settings.extraction_workers,
        )
        refresh = getattr(index, "refresh", None)
        if isinstance(bus, PostgresEventBus) and with_index and refresh is not None:
            # Workers share the Chroma server; what another one writes, this one re-reads.
            bus.on_index_change(refresh)
        return Runtime(settings=settings, service=service, bus=bus, lock=data_lock)
    except BaseException:
        if data_lock is not None:
            data_lock.release()
        raise


def _libpq_url(url: str) -> str:
    """psycopg wants postgresql://, SQLAlchemy URLs may say postgresql+psycopg://."""
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url
