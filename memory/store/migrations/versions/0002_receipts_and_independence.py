"""origins record what each observation proposed; candidates count independent observations;
a turn is idempotent per submitting token

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("origins") as batch:
        batch.add_column(sa.Column("content", sa.Text(), nullable=True))
        batch.add_column(sa.Column("kind", sa.String(16), nullable=True))
        batch.add_column(sa.Column("namespace", sa.String(140), nullable=True))
    op.create_index("ix_origins_turn_ref", "origins", ["turn_ref"])
    with op.batch_alter_table("candidates") as batch:
        batch.add_column(sa.Column("independent_observations", sa.Integer(), nullable=False,
                                   server_default="1"))
    # Earlier observations did not keep what they proposed: the candidate's text is the best
    # record there is of it.
    op.execute(
        "UPDATE origins SET content = (SELECT c.content FROM candidates c "
        "WHERE c.id = origins.candidate_id), kind = (SELECT c.kind FROM candidates c "
        "WHERE c.id = origins.candidate_id), namespace = (SELECT c.namespace FROM candidates c "
        "WHERE c.id = origins.candidate_id)")
    # Distinct conversations, plus one per token for observations outside any conversation.
    op.execute(
        "UPDATE candidates SET independent_observations = (SELECT "
        "COUNT(DISTINCT o.conversation_id) + COUNT(DISTINCT CASE WHEN o.conversation_id IS NULL "
        "THEN COALESCE(o.created_by, '') END) FROM origins o WHERE o.candidate_id = candidates.id)")
    op.execute("UPDATE candidates SET independent_observations = 1 "
               "WHERE independent_observations < 1")
    with op.batch_alter_table("candidates") as batch:
        batch.alter_column("independent_observations", server_default=None)
    with op.batch_alter_table("turns") as batch:
        batch.drop_constraint("uq_turns_conversation_id_turn_id_trigger", type_="unique")
        batch.create_unique_constraint(
            "uq_turns_conversation_id_turn_id_trigger_created_by",
            ["conversation_id", "turn_id", "trigger", "created_by"])


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_constraint("uq_turns_conversation_id_turn_id_trigger_created_by",
                              type_="unique")
        batch.create_unique_constraint("uq_turns_conversation_id_turn_id_trigger",
                                       ["conversation_id", "turn_id", "trigger"])
    with op.batch_alter_table("candidates") as batch:
        batch.drop_column("independent_observations")
    op.drop_index("ix_origins_turn_ref", "origins")
    with op.batch_alter_table("origins") as batch:
        batch.drop_column("namespace")
        batch.drop_column("kind")
        batch.drop_column("content")
