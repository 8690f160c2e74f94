"""Sweeps and their points: every point an immutable profile version (SWEEP-2).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create `sweeps` and `sweep_points` (a point's run is a plain id: the run may be
    deleted, the point's record stays)."""
    op.create_table(
        "sweeps",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_sweeps"),
    )
    op.create_index("ix_sweeps_started_at", "sweeps", ["started_at"])
    op.create_table(
        "sweep_points",
        sa.Column(
            "pk",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
            autoincrement=True,
        ),
        sa.Column("sweep_id", sa.String(64), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("point", sa.JSON, nullable=False),
        sa.Column("profile_hash", sa.String(64), nullable=False),
        sa.Column("profile", sa.JSON, nullable=False),
        sa.Column("run_key", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("estimate", sa.JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_sweep_points"),
        sa.ForeignKeyConstraint(
            ["sweep_id"],
            ["sweeps.id"],
            name="fk_sweep_points_sweep_id_sweeps",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("sweep_id", "idx", name="uq_sweep_points_sweep_id_idx"),
    )
    op.create_index(
        "ix_sweep_points_profile_hash_run_key", "sweep_points", ["profile_hash", "run_key"]
    )


def downgrade() -> None:
    """Drop both tables (the points' runs are untouched)."""
    op.drop_index("ix_sweep_points_profile_hash_run_key", table_name="sweep_points")
    op.drop_table("sweep_points")
    op.drop_index("ix_sweeps_started_at", table_name="sweeps")
    op.drop_table("sweeps")
