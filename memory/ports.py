"""The Protocols the core needs and other packages implement, and the dataclasses they exchange.

`extraction/` implements `Extractor`; `embeddings/` implements `Embedder`, `MemoryIndex` and
`CandidateMatcher`; `memory/store/vectors.py` implements `VectorStore` (the persisted vectors
the embeddings package reads before it embeds anything). The core only ever sees these shapes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from memvet.memory.kinds import Kind

ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True)
class Message:
    """One message of a conversation: `role` is one of ROLES."""

    role: str
    content: str


@dataclass(frozen=True)
class ExtractionContext:
    """Where the messages come from. `trigger` is 'turn', 'compaction' or 'request'."""

    workspace: str | None
    persona: str
    trigger: str = "turn"


@dataclass(frozen=True)
class ExtractedCandidate:
    """What an extractor proposes. `namespace` is canonical (`workspace:x` / `persona:y`).

    `excerpt` is the passage of the messages it came from (for highlighting), if known.
    """

    content: str
    kind: Kind
    namespace: str
    confidence: float
    excerpt: str | None = None


@dataclass
class ExtractionStats:
    """What an extractor dropped, for logging and metrics (an LLM's ghost kinds, say)."""

    dropped_ghost_kind: int = 0
    dropped_malformed: int = 0
    dropped_non_json: int = 0
    fallbacks: int = 0
    errors: int = 0


@runtime_checkable
class Extractor(Protocol):
    """Messages plus context in, candidates out. Must not raise for odd text."""

    name: str

    def extract(
        self, messages: Sequence[Message], context: ExtractionContext
    ) -> list[ExtractedCandidate]: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors; `model_id` and `dimension` identify the space."""

    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@runtime_checkable
class TruncatingEmbedder(Embedder, Protocol):
    """An Embedder that can also cut texts to what fits in a number of its model's tokens."""

    def truncate(self, texts: Sequence[str], max_tokens: int) -> list[str]:
        """Each text as its longest prefix of whole words that the model reads in at most
        `max_tokens` tokens, its special tokens included (a text that fits comes back as it
        is): embedding the prefix gives the vector of the text's first tokens."""
        ...


@dataclass(frozen=True)
class EmbeddingModel:
    """Which model made a set of vectors: its id and dimension, and the local directory it
    loads from (None: the packaged all-MiniLM-L6-v2)."""

    model_id: str
    dimension: int
    path: str | None = None


@runtime_checkable
class VectorStore(Protocol):
    """Vectors kept by (model id, text hash), apart from recall: what was embedded once (for the
    equivalence matcher or the recall index) is read back instead of embedded again.

    Vectors travel as float32 bytes. `save` must be called outside a database write (it
    writes in a transaction of its own); saving a vector that is already there is a no-op.
    """

    def load(self, model_id: str, hashes: Sequence[str]) -> dict[str, bytes]: ...

    def save(self, model_id: str, vectors: Mapping[str, bytes]) -> None: ...


def text_hash(content: str) -> str:
    """The key a text's vector is kept under (the vector depends on the exact text only)."""
    import hashlib

    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class IndexedMemory:
    """An approved memory as the recall index holds it."""

    id: str
    namespace: str
    kind: Kind
    content: str


@dataclass(frozen=True)
class SearchHit:
    """One recall result with the parts of its score.

    `score` = `fused * kind_weight`; `dense` is the cosine similarity (or None if the memory
    was found only lexically), `lexical` the BM25 score (or None), `fused` their combination.
    """

    memory_id: str
    namespace: str
    kind: Kind
    content: str
    score: float
    dense: float | None
    lexical: float | None
    fused: float
    kind_weight: float


ProgressCallback = Callable[[int, int], None]


@runtime_checkable
class MemoryIndex(Protocol):
    """The recall side: approved memories only, one partition per namespace.

    An index may also offer `embed_ahead(memories)`: embed what a later `upsert` of them needs,
    writing nothing (`EmbedsAhead`); bulk work then embeds one batch while it writes the last.
    """

    def upsert(self, memories: Sequence[IndexedMemory]) -> None: ...

    def remove(self, namespace: str, memory_ids: Sequence[str]) -> None: ...

    def search(
        self,
        query: str,
        namespaces: Sequence[str],
        *,
        kinds: Sequence[Kind] | None = None,
        limit: int = 10,
        kind_weights: dict[Kind, float] | None = None,
    ) -> list[SearchHit]: ...

    def snapshot(self) -> dict[str, dict[str, str]]:
        """Every indexed memory: {namespace: {memory_id: content_hash}}, for reconciliation."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class EmbedsAhead(Protocol):
    """An index that can embed a batch before it is written (see MemoryIndex)."""

    def embed_ahead(self, memories: Sequence[IndexedMemory]) -> None: ...


@dataclass(frozen=True)
class Equivalent:
    candidate_id: str
    similarity: float


@runtime_checkable
class CandidateMatcher(Protocol):
    """Semantic equivalence at intake. Its vectors live apart from recallable memory."""

    def find(
        self, namespace: str, kind: Kind, content: str, *, threshold: float
    ) -> Equivalent | None: ...

    def add(self, candidate_id: str, namespace: str, kind: Kind, content: str) -> None: ...

    def discard(self, candidate_ids: Sequence[str]) -> None: ...

    def reset(self, items: Sequence[tuple[str, str, Kind, str]]) -> None:
        """Replace everything with (candidate_id, namespace, kind, content) items.

        Cheap: vectors are read (or embedded) when a namespace and kind is first searched."""
        ...

    def prepare(self, contents: Sequence[str]) -> None:
        """Embed texts about to be searched and added together, in one batch."""
        ...


class EventAction(StrEnum):
    """What a review event reports: one per transition, plus the policy and revocations."""

    CREATED = "created"
    MERGED = "merged"
    APPROVED = "approved"
    REJECTED = "rejected"
    ARCHIVED = "archived"
    EDITED = "edited"
    MEMORY_UPDATED = "memory_updated"
    MEMORY_DELETED = "memory_deleted"
    POLICY_CHANGED = "policy_changed"
    TOKEN_REVOKED = "token_revoked"  # ends that token's live streams; never delivered


PUBLIC_ACTIONS = frozenset(EventAction) - {EventAction.TOKEN_REVOKED}


@runtime_checkable
class EventBus(Protocol):
    """Fans review events out to live subscribers (memory/events.py: in-process or NOTIFY)."""

    def publish(self, event: ReviewEvent) -> None: ...

    def subscribe(self) -> AbstractAsyncContextManager[asyncio.Queue[ReviewEvent]]: ...


@dataclass(frozen=True)
class ReviewEvent:
    """One per transition. `action` names it; ids point at what changed."""

    action: str
    namespace: str
    candidate_id: str | None
    memory_id: str | None
    actor: str
    at: str
    extra: dict[str, object] = field(default_factory=dict)


def index_hash(kind: Kind | str, content: str) -> str:
    """The content hash an index keeps per memory, so reconciliation sees stale vectors."""
    import hashlib

    return hashlib.sha256(f"{Kind(kind).value}\n{content}".encode()).hexdigest()[:32]
