"""The tables. The schema is owned by the Alembic migrations beside this module; `metadata`
here is what they build and what a test compares them against."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


def new_id() -> str:
    """A fresh row id: 32 hex characters."""
    return uuid.uuid4().hex


class UTCDateTime(TypeDecorator[datetime]):
    """Stores naive UTC, returns aware UTC: the same on SQLite and PostgreSQL."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use memory.clock.utcnow()")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        parsed: datetime = (  # SQLite may hand back text
            datetime.fromisoformat(value) if isinstance(value, str) else value)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

turns = Table(
    "turns",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("conversation_id", String(200), nullable=False),
    Column("turn_id", String(200), nullable=False),
    Column("trigger", String(16), nullable=False),  # turn | compaction | explicit | manual
    Column("workspace", String(128), nullable=True),
    Column("persona", String(128), nullable=True),
    Column("messages", JSON, nullable=False),  # [{"role", "content"}]
    Column("extractor", String(32), nullable=True),
    Column("status", String(16), nullable=False, default="done"),  # queued | done | failed
    Column("created_by", String(64), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    # Idempotent per submitting token: another token replaying the ids gets a turn of its own
    # and learns nothing about this one.
    UniqueConstraint("conversation_id", "turn_id", "trigger", "created_by"),
)

candidates = Table(
    "candidates",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("content", Text, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("namespace", String(140), nullable=False),
    Column("source", String(16), nullable=False),  # explicit | turn | compaction | manual
    Column("confidence", Float, nullable=False),
    Column("observations", Integer, nullable=False),
    # Distinct conversations, plus one per token for observations outside any conversation:
    # what the auto-approve policy counts (one agent repeating itself is one observation).
    Column("independent_observations", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # pending | approved | rejected | archived
    Column("content_key", String(64), nullable=False),
    Column("original_key", String(64), nullable=False),
    Column("created_by", String(64), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("last_observed_at", UTCDateTime(), nullable=False),
    Column("touched_at", UTCDateTime(), nullable=False),  # last observation or edit
    Column("reviewed_at", UTCDateTime(), nullable=True),
    Column("reviewed_by", String(128), nullable=True),
    Column("review_reason", Text, nullable=True),
    Index(None, "namespace", "kind", "content_key"),
    Index(None, "namespace", "kind", "original_key"),
    Index(None, "status", "touched_at"),
    Index(None, "status", "created_at"),
)

origins = Table(
    "origins",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("candidate_id", String(32), ForeignKey("candidates.id"), nullable=False, index=True),
    Column("turn_ref", String(32), ForeignKey("turns.id"), nullable=True),
    Column("source", String(16), nullable=False),
    Column("conversation_id", String(200), nullable=True),
    Column("turn_id", String(200), nullable=True),
    Column("excerpt", Text, nullable=True),
    # What this observation proposed (a reviewer may later edit the candidate): the receipt
    # an agent gets back is built from this, never from the row as it now stands.
    Column("content", Text, nullable=True),
    Column("kind", String(16), nullable=True),
    Column("namespace", String(140), nullable=True),
    Column("confidence", Float, nullable=False),
    Column("created_by", String(64), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Index(None, "candidate_id", "conversation_id", "turn_id"),
    Index(None, "turn_ref"),
)

memories = Table(
    "memories",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("candidate_id", String(32), ForeignKey("candidates.id"), nullable=False, unique=True),
    Column("content", Text, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("namespace", String(140), nullable=False, index=True),
    Column("observations", Integer, nullable=False),
    Column("approved_at", UTCDateTime(), nullable=False),
    Column("approved_by", String(128), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Index(None, "namespace", "kind"),
)

transitions = Table(
    "transitions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("candidate_id", String(32), nullable=False, index=True),
    Column("memory_id", String(32), nullable=True, index=True),
    Column("action", String(24), nullable=False),
    Column("from_status", String(16), nullable=True),
    Column("to_status", String(16), nullable=True),
    Column("actor", String(128), nullable=False),
    Column("at", UTCDateTime(), nullable=False),
    Column("changes", JSON, nullable=True),
    Column("reason", Text, nullable=True),
)

# What the recall index owes: written in the same transaction as the change, cleared once the
# index has applied it. A crash in between leaves the row, and reconciliation finishes the job.
index_outbox = Table(
    "index_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("memory_id", String(32), nullable=False),
    Column("namespace", String(140), nullable=False),
    Column("op", String(8), nullable=False),  # upsert | delete
    Column("created_at", UTCDateTime(), nullable=False),
)

settings_table = Table(
    "settings",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", JSON, nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("updated_by", String(128), nullable=True),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("name", String(128), nullable=False),
    Column("role", String(16), nullable=False),
    Column("namespaces", JSON, nullable=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("revoked_at", UTCDateTime(), nullable=True),
)

# The vector of every candidate text, per embedding model, keyed by a hash of the text (the
# vector depends on nothing else): the equivalence matcher reads these at start instead of
# embedding the queue again, and the recall index reads them on approve (a memory's text is its
# candidate's) instead of embedding twice. Never recallable: recall reads its own collections.
candidate_vectors = Table(
    "candidate_vectors",
    metadata,
    Column("model_id", String(200), nullable=False),
    Column("content_hash", String(32), nullable=False),
    Column("vector", LargeBinary, nullable=False),  # float32, little-endian
    Column("created_at", UTCDateTime(), nullable=False),
    PrimaryKeyConstraint("model_id", "content_hash"),
)

# Which embedding model the recall index serves ('active', at most one) and which one
# `memvet reindex` is building beside it ('building'). Switching is one update of this table.
index_models = Table(
    "index_models",
    metadata,
    Column("model_id", String(200), primary_key=True),
    Column("dimension", Integer, nullable=False),
    Column("path", Text, nullable=True),  # a local model directory; NULL: the packaged model
    Column("status", String(16), nullable=False),  # active | building
    Column("updated_at", UTCDateTime(), nullable=False),
)
