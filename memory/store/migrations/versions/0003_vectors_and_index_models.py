"""candidate vectors kept per embedding model; the model the recall index serves

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memvet.memory.store.tables import UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "candidate_vectors",
        sa.Column("model_id", sa.String(200), nullable=False),
        sa.Column("content_hash", sa.String(32), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("model_id", "content_hash", name="pk_candidate_vectors"),
    )
    op.create_table(
        "index_models",
        sa.Column("model_id", sa.String(200), nullable=False),
        sa.Column("dimension", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("model_id", name="pk_index_models"),
    )


def downgrade() -> None:
    op.drop_table("index_models")
    op.drop_table("candidate_vectors")
