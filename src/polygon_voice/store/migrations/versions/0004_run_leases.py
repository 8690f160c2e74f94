"""Run leases: which process is executing a run, so two never resume it at once.

Revision ID: 0004
Revises: 0003
Create Date: 2025-01-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create `run_leases`: at most one row per run, gone with its run."""
    op.create_table(
        "run_leases",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_run_leases"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_run_leases_run_id_runs", ondelete="CASCADE"
        ),
    )


def downgrade() -> None:
    """Drop `run_leases` (runs and their results are untouched)."""
    op.drop_table("run_leases")
