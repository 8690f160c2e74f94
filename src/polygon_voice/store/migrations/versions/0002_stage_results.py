"""Stage results: what the stages after the conversation (checks, judge, probes) produce.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Plain types here, not schema.py's, so this file keeps meaning what it meant in 0002.
_BIG_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create `stage_results`: one row per (conversation, stage, name)."""
    op.create_table(
        "stage_results",
        sa.Column("pk", _BIG_PK, nullable=False, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("conversation_pk", sa.BigInteger, nullable=False),
        sa.Column("conversation_id", sa.Text, nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("stage", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False, server_default=""),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_stage_results"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_stage_results_run_id_runs", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["conversation_pk"],
            ["conversations.pk"],
            name="fk_stage_results_conversation_pk_conversations",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint(
            "conversation_pk", "stage", "name", name="uq_stage_results_conversation_pk_stage_name"
        ),
    )
    op.create_index(
        "ix_stage_results_run_id_stage_name_idx",
        "stage_results",
        ["run_id", "stage", "name", "idx"],
    )


def downgrade() -> None:
    """Drop `stage_results` (the conversations are untouched)."""
    op.drop_index("ix_stage_results_run_id_stage_name_idx", table_name="stage_results")
    op.drop_table("stage_results")
