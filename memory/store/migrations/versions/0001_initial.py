"""initial schema: turns, candidates, origins, memories, transitions, outbox, settings, tokens

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memvet.memory.store.tables import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "turns",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("conversation_id", sa.String(200), nullable=False),
        sa.Column("turn_id", sa.String(200), nullable=False),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("workspace", sa.String(128), nullable=True),
        sa.Column("persona", sa.String(128), nullable=True),
        sa.Column("messages", sa.JSON(), nullable=False),
        sa.Column("extractor", sa.String(32), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_turns"),
        sa.UniqueConstraint(
            "conversation_id", "turn_id", "trigger",
            name="uq_turns_conversation_id_turn_id_trigger",
        ),
    )
    op.create_table(
        "candidates",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("namespace", sa.String(140), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("observations", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("content_key", sa.String(64), nullable=False),
        sa.Column("original_key", sa.String(64), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("last_observed_at", UTCDateTime(), nullable=False),
        sa.Column("touched_at", UTCDateTime(), nullable=False),
        sa.Column("reviewed_at", UTCDateTime(), nullable=True),
        sa.Column("reviewed_by", sa.String(128), nullable=True),
        sa.Column("review_reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_candidates"),
    )
    op.create_index("ix_candidates_namespace_kind_content_key", "candidates",
                    ["namespace", "kind", "content_key"])
    op.create_index("ix_candidates_namespace_kind_original_key", "candidates",
                    ["namespace", "kind", "original_key"])
    op.create_index("ix_candidates_status_touched_at", "candidates", ["status", "touched_at"])
    op.create_index("ix_candidates_status_created_at", "candidates", ["status", "created_at"])
    op.create_table(
        "origins",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("candidate_id", sa.String(32), nullable=False),
        sa.Column("turn_ref", sa.String(32), nullable=True),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("conversation_id", sa.String(200), nullable=True),
        sa.Column("turn_id", sa.String(200), nullable=True),
        sa.Column("excerpt", sa.Text(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidates.id"],
                                name="fk_origins_candidate_id_candidates"),
        sa.ForeignKeyConstraint(["turn_ref"], ["turns.id"], name="fk_origins_turn_ref_turns"),
        sa.PrimaryKeyConstraint("id", name="pk_origins"),
    )
    op.create_index("ix_origins_candidate_id", "origins", ["candidate_id"])
    op.create_index("ix_origins_candidate_id_conversation_id_turn_id", "origins",
                    ["candidate_id", "conversation_id", "turn_id"])
    op.create_table(
        "memories",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("candidate_id", sa.String(32), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("namespace", sa.String(140), nullable=False),
        sa.Column("observations", sa.Integer(), nullable=False),
        sa.Column("approved_at", UTCDateTime(), nullable=False),
        sa.Column("approved_by", sa.String(128), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidates.id"],
                                name="fk_memories_candidate_id_candidates"),
        sa.PrimaryKeyConstraint("id", name="pk_memories"),
        sa.UniqueConstraint("candidate_id", name="uq_memories_candidate_id"),
    )
    op.create_index("ix_memories_namespace", "memories", ["namespace"])
    op.create_index("ix_memories_namespace_kind", "memories", ["namespace", "kind"])
    op.create_table(
        "transitions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("candidate_id", sa.String(32), nullable=False),
        sa.Column("memory_id", sa.String(32), nullable=True),
        sa.Column("action", sa.String(24), nullable=False),
        sa.Column("from_status", sa.String(16), nullable=True),
        sa.Column("to_status", sa.String(16), nullable=True),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_transitions"),
    )
    op.create_index("ix_transitions_candidate_id", "transitions", ["candidate_id"])
    op.create_index("ix_transitions_memory_id", "transitions", ["memory_id"])
    op.create_table(
        "index_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("memory_id", sa.String(32), nullable=False),
        sa.Column("namespace", sa.String(140), nullable=False),
        sa.Column("op", sa.String(8), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_index_outbox"),
    )
    op.create_table(
        "settings",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("updated_by", sa.String(128), nullable=True),
        sa.PrimaryKeyConstraint("key", name="pk_settings"),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("namespaces", sa.JSON(), nullable=True),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_tokens"),
        sa.UniqueConstraint("token_hash", name="uq_tokens_token_hash"),
    )


def downgrade() -> None:
    for table in ("tokens", "settings", "index_outbox", "transitions", "memories", "origins",
                  "candidates", "turns"):
        op.drop_table(table)
