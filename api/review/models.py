"""What the review queue's calls return: small frozen dataclasses built from the API's JSON,
with GraphQL enum names (`FACT`, `EXPLICIT`, `PENDING`) in lower case, as the CLI shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def lower(value: object) -> str:
    """GraphQL enum names (`FACT`, `EXPLICIT`) as the CLI shows them: lower case."""
    return str(value or "").lower()


@dataclass(frozen=True)
class Viewer:
    """Who the token is: name, role (lower case) and namespace scope (None: all)."""

    name: str
    role: str
    namespaces: tuple[str, ...] | None

    @property
    def can_review(self) -> bool:
        return self.role in ("reviewer", "admin")


@dataclass(frozen=True)
class Candidate:
    """One candidate as the queue lists it; kind, source and status in lower case."""

    id: str
    content: str
    kind: str
    namespace: str
    source: str
    confidence: float
    observations: int
    status: str
    created_at: str
    last_observed_at: str

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Candidate:
        return cls(id=str(d["id"]), content=str(d["content"]), kind=lower(d["kind"]),
                   namespace=str(d["namespace"]), source=lower(d["source"]),
                   confidence=float(d["confidence"]), observations=int(d["observations"]),
                   status=lower(d["status"]), created_at=str(d["createdAt"]),
                   last_observed_at=str(d.get("lastObservedAt") or d["createdAt"]))

    def as_json(self) -> dict[str, Any]:
        """The `--list --json` shape: exactly these keys."""
        return {"id": self.id, "content": self.content, "kind": self.kind,
                "namespace": self.namespace, "source": self.source,
                "confidence": self.confidence, "observations": self.observations,
                "createdAt": self.created_at}


@dataclass(frozen=True)
class Origin:
    """One observation of a candidate: where it came from, with the excerpt."""

    id: str
    source: str
    conversation_id: str | None
    turn_id: str | None
    turn_ref: str | None
    excerpt: str | None
    confidence: float
    created_at: str

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Origin:
        return cls(id=str(d["id"]), source=lower(d["source"]),
                   conversation_id=d.get("conversationId"), turn_id=d.get("turnId"),
                   turn_ref=str(d["turnRef"]) if d.get("turnRef") else None,
                   excerpt=d.get("excerpt"), confidence=float(d["confidence"]),
                   created_at=str(d["createdAt"]))


@dataclass(frozen=True)
class Related:
    """An approved memory close to a candidate (check it before approving)."""

    score: float
    memory_id: str
    content: str
    kind: str
    namespace: str


@dataclass(frozen=True)
class Detail:
    """A candidate with its origins and the closest approved memories."""

    candidate: Candidate
    origin: Origin | None
    origins: tuple[Origin, ...]
    related: tuple[Related, ...]

    @property
    def turn_ref(self) -> str | None:
        """The first stored turn behind the candidate (its oldest origin that has one)."""
        for origin in (self.origin, *self.origins):
            if origin is not None and origin.turn_ref:
                return origin.turn_ref
        return None

    @property
    def excerpts(self) -> tuple[str, ...]:
        """Every distinct excerpt, oldest first."""
        seen: dict[str, None] = {}
        for origin in (self.origin, *self.origins):
            if origin is not None and origin.excerpt:
                seen.setdefault(origin.excerpt, None)
        return tuple(seen)


@dataclass(frozen=True)
class Message:
    """One message of a stored turn."""

    role: str
    content: str


@dataclass(frozen=True)
class Turn:
    """The stored exchange a candidate came from."""

    id: str
    conversation_id: str
    turn_id: str
    trigger: str
    workspace: str | None
    persona: str | None
    created_at: str
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Approved:
    """The memory an approval made."""

    id: str
    candidate_id: str
    content: str
    kind: str
    namespace: str


@dataclass(frozen=True)
class Page:
    """Pending candidates and how many match in all."""

    candidates: tuple[Candidate, ...]
    total: int


@dataclass(frozen=True)
class Event:
    """One review event: what happened (lower case), where, and the candidate as it is now."""

    action: str
    namespace: str
    actor: str
    candidate_id: str | None
    candidate: Candidate | None

    @classmethod
    def of(cls, e: Mapping[str, Any]) -> Event:
        cand = e.get("candidate")
        return cls(action=lower(e["action"]), namespace=str(e.get("namespace") or ""),
                   actor=str(e.get("actor") or ""),
                   candidate_id=str(e["candidateId"]) if e.get("candidateId") else None,
                   candidate=Candidate.of(cand) if cand else None)


@dataclass(frozen=True)
class LiveStatus:
    """The live connection's state, for the UI to say: connecting, live, retrying, denied."""

    state: str
    detail: str = ""
    retry_in: float | None = None
    attempt: int = 0
    reconnected: bool = False


@dataclass(frozen=True)
class Edit:
    """A reviewer's correction before approving; None leaves a field as it is."""

    content: str | None = None
    kind: str | None = None
    namespace: str | None = None

    def as_input(self) -> dict[str, Any] | None:
        """The CandidateEdit input, or None when nothing changes."""
        out: dict[str, Any] = {}
        if self.content is not None:
            out["content"] = self.content
        if self.kind is not None:
            out["kind"] = self.kind.strip().upper()
        if self.namespace is not None:
            out["namespace"] = self.namespace
        return out or None
