"""Personas: simulated callers generated from an agent's prompt (SIM-2, SIM-3).

Revision ID: 0003
Revises: 0002
Create Date: 2025-01-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Plain types here, not schema.py's, so this file keeps meaning what it meant in 0003.
_BIG_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create `personas`: one row per persona, bound to the hash of its prompt."""
    op.create_table(
        "personas",
        sa.Column("pk", _BIG_PK, nullable=False, autoincrement=True),
        sa.Column("persona_id", sa.String(64), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("prompt_path", sa.Text, nullable=False),
        sa.Column("prompt_hash", sa.String(128), nullable=False),
        sa.Column("generator", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_personas"),
        sa.UniqueConstraint("persona_id", name="uq_personas_persona_id"),
    )
    op.create_index("ix_personas_prompt_path", "personas", ["prompt_path"])


def downgrade() -> None:
    """Drop `personas` (runs and conversations are untouched)."""
    op.drop_index("ix_personas_prompt_path", table_name="personas")
    op.drop_table("personas")
