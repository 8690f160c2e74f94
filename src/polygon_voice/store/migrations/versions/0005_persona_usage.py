"""Persona usage: what the model requests that made a persona spent.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add `personas.usage`: JSON text, null for personas made without a model (or before)."""
    op.add_column("personas", sa.Column("usage", sa.Text, nullable=True))


def downgrade() -> None:
    """Drop `personas.usage` (the personas themselves are untouched)."""
    with op.batch_alter_table("personas") as batch:
        batch.drop_column("usage")
