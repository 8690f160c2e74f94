"""Persona realism: a person may mark a stored persona as unrealistic (READ-2).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add `personas.unrealistic` (false for every stored persona), its note and when it was
    marked (both null until someone marks it)."""
    with op.batch_alter_table("personas") as batch:
        batch.add_column(
            sa.Column("unrealistic", sa.Boolean, nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("unrealistic_note", sa.Text, nullable=True))
        batch.add_column(sa.Column("marked_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Drop the three columns (the personas themselves are untouched)."""
    with op.batch_alter_table("personas") as batch:
        batch.drop_column("marked_at")
        batch.drop_column("unrealistic_note")
        batch.drop_column("unrealistic")
