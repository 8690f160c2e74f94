"""Initial schema: runs and their conversations (stage: conversation).

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Plain types here, not schema.py's, so this file keeps meaning what it meant in 0001.
_BIG_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create `runs` and `conversations`."""
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("suite", sa.Text, nullable=False),
        sa.Column("suite_path", sa.Text, nullable=False),
        sa.Column("suite_hash", sa.String(128), nullable=False),
        sa.Column("agent", sa.Text, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("polygon_version", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_started_at", "runs", ["started_at"])
    op.create_table(
        "conversations",
        sa.Column("pk", _BIG_PK, nullable=False, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("scenario_id", sa.Text, nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("stage", sa.String(32), nullable=False),
        sa.Column("end_reason", sa.String(32), nullable=False),
        sa.Column("end_message", sa.Text, nullable=False),
        sa.Column("turn_count", sa.Integer, nullable=False),
        sa.Column("tool_call_count", sa.Integer, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_conversations"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_conversations_run_id_runs", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("run_id", "id", name="uq_conversations_run_id_id"),
    )
    op.create_index("ix_conversations_run_id_idx", "conversations", ["run_id", "idx"])


def downgrade() -> None:
    """Drop everything this revision created."""
    op.drop_index("ix_conversations_run_id_idx", table_name="conversations")
    op.drop_table("conversations")
    op.drop_index("ix_runs_started_at", table_name="runs")
    op.drop_table("runs")
