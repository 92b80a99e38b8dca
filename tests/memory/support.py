"""Helpers for the memory-core tests: a movable clock, fakes for the ports, a store dump
(``from tests.memory.support import ...``)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from memvet.memory.access import Principal, Role
from memvet.memory.kinds import Kind
from memvet.memory.ports import (
    ExtractedCandidate,
    ExtractionContext,
    IndexedMemory,
    Message,
    SearchHit,
    index_hash,
)
from memvet.memory.store import tables

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

ADMIN = Principal.system("tester")
REVIEWER = Principal(id="rev-1", name="rita", role=Role.REVIEWER)
AGENT = Principal(id="agent-1", name="claude", role=Role.AGENT)
OTHER_AGENT = Principal(id="agent-2", name="codex", role=Role.AGENT)
SHOP_REVIEWER = Principal(
    id="rev-shop", name="shop", role=Role.REVIEWER, namespaces=frozenset({"workspace:shop"})
)
SHOP_AGENT = Principal(
    id="agent-shop", name="shop-agent", role=Role.AGENT, namespaces=frozenset({"workspace:shop"})
)


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now = self.now + timedelta(**delta)
        return self.now


class FakeIndex:
    """An in-memory MemoryIndex: {namespace: {memory_id: IndexedMemory}}."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, IndexedMemory]] = {}
        self.upserts = 0
        self.removals = 0
        self.closed = False
        self.fail = False
        self._lock = threading.Lock()

    def upsert(self, memories: Sequence[IndexedMemory]) -> None:
        if self.fail:
            raise RuntimeError("index down")
        with self._lock:
            for m in memories:
                for ns, held in self.items.items():  # a memory lives in one partition
                    if ns != m.namespace:
                        held.pop(m.id, None)
                self.items.setdefault(m.namespace, {})[m.id] = m
                self.upserts += 1

    def remove(self, namespace: str, memory_ids: Sequence[str]) -> None:
        if self.fail:
            raise RuntimeError("index down")
        with self._lock:
            held = self.items.get(namespace, {})
            for mid in memory_ids:
                if held.pop(mid, None) is not None:
                    self.removals += 1

    def search(
        self,
        query: str,
        namespaces: Sequence[str],
        *,
        kinds: Sequence[Kind] | None = None,
        limit: int = 10,
        kind_weights: dict[Kind, float] | None = None,
    ) -> list[SearchHit]:
        words = set(query.lower().split())
        hits = []
        for ns in namespaces:
            for m in self.items.get(ns, {}).values():
                if kinds and m.kind not in kinds:
                    continue
                score = len(words & set(m.content.lower().split())) / max(1, len(words))
                if score > 0:
                    hits.append(SearchHit(m.id, ns, m.kind, m.content, score, None, score,
                                          score, 1.0))
        return sorted(hits, key=lambda h: -h.score)[:limit]

    def snapshot(self) -> dict[str, dict[str, str]]:
        with self._lock:
            return {
                ns: {mid: index_hash(m.kind, m.content) for mid, m in held.items()}
                for ns, held in self.items.items()
                if held
            }

    def close(self) -> None:
        self.closed = True

    def contents(self) -> dict[str, tuple[str, str, str]]:
        """{memory_id: (namespace, kind, content)} over every partition."""
        return {
            mid: (ns, m.kind.value, m.content)
            for ns, held in self.items.items()
            for mid, m in held.items()
        }


@dataclass
class FakeExtractor:
    """Returns what `script` says for a message text; otherwise nothing (a quiet turn)."""

    name: str = "fake"
    background: bool = False
    script: dict[str, list[ExtractedCandidate]] = field(default_factory=dict)
    calls: int = 0
    gate: threading.Event | None = None  # background runs wait on it

    def extract(
        self, messages: Sequence[Message], context: ExtractionContext
    ) -> list[ExtractedCandidate]:
        self.calls += 1
        if self.gate is not None:
            self.gate.wait(10)
        found: list[ExtractedCandidate] = []
        for m in messages:
            found.extend(self.script.get(m.content, []))
        return found


def dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in a stable order: compare two dumps for 'nothing changed'."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for table in tables.metadata.sorted_tables:
            rows = conn.execute(select(table)).all()
            out[table.name] = sorted((tuple(r) for r in rows), key=repr)
    return out
