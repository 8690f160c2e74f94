"""The tables as the code reads and writes them; migrations/ creates and changes them."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

# Named constraints so later migrations (batch mode on SQLite) can find and change them.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# BIGINT on PostgreSQL; on SQLite only "INTEGER PRIMARY KEY" is the cheap rowid alias.
BigIntPk = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


class UtcDateTime(sa.TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite keeps no offset)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Store UTC; SQLite drops the offset, so the instant must already be UTC."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"datetime {value.isoformat()} has no time zone")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Read back as aware UTC whatever the backend returns."""
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("suite", sa.Text, nullable=False),
    sa.Column("suite_path", sa.Text, nullable=False),
    sa.Column("suite_hash", sa.String(128), nullable=False),
    sa.Column("agent", sa.Text, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("started_at", UtcDateTime, nullable=False),
    sa.Column("finished_at", UtcDateTime, nullable=True),
    sa.Column("config", sa.JSON, nullable=False),
    sa.Column("polygon_version", sa.String(32), nullable=False),
    sa.Index(None, "started_at"),
)

conversations = sa.Table(
    "conversations",
    metadata,
    sa.Column("pk", BigIntPk, primary_key=True, autoincrement=True),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("id", sa.Text, nullable=False),
    sa.Column("scenario_id", sa.Text, nullable=False),
    sa.Column("idx", sa.Integer, nullable=False),
    sa.Column("stage", sa.String(32), nullable=False),
    sa.Column("end_reason", sa.String(32), nullable=False),
    sa.Column("end_message", sa.Text, nullable=False),
    sa.Column("turn_count", sa.Integer, nullable=False),
    sa.Column("tool_call_count", sa.Integer, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.UniqueConstraint("run_id", "id"),
    sa.Index(None, "run_id", "idx"),
)

# Results of the stages after the conversation (checks, judge, probes), one row per
# (conversation, stage, name): kept apart from `conversations` so every result names the
# stage that produced it (PIPE-1) and a rejudge adds a named set without touching the
# conversation. run_id, conversation_id and idx repeat the conversation's for cheap reads.
stage_results = sa.Table(
    "stage_results",
    metadata,
    sa.Column("pk", BigIntPk, primary_key=True, autoincrement=True),
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column(
        "conversation_pk",
        sa.BigInteger,
        sa.ForeignKey("conversations.pk", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("conversation_id", sa.Text, nullable=False),
    sa.Column("idx", sa.Integer, nullable=False),
    sa.Column("stage", sa.Text, nullable=False),
    sa.Column("name", sa.Text, nullable=False, server_default=""),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.UniqueConstraint("conversation_pk", "stage", "name"),
    sa.Index(None, "run_id", "stage", "name", "idx"),
)

# Simulated callers generated from an agent's prompt (SIM-2). `data` is the Persona as JSON
# text; `prompt_hash` is the content hash of the prompt it was made from, so a persona is
# stale when the file's current hash differs (computed when read, never stored: SIM-3).
personas = sa.Table(
    "personas",
    metadata,
    sa.Column("pk", BigIntPk, primary_key=True, autoincrement=True),
    sa.Column("persona_id", sa.String(64), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("prompt_path", sa.Text, nullable=False),
    sa.Column("prompt_hash", sa.String(128), nullable=False),
    sa.Column("generator", sa.Text, nullable=False),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("updated_at", UtcDateTime, nullable=False),
    # What the model requests that made it spent, as JSON text (migration 0005); null
    # for a persona made without a model, or stored before.
    sa.Column("usage", sa.Text, nullable=True),
    # A person's judgement of the persona (migration 0006, READ-2): an unrealistic one is
    # left out of later runs unless asked; the note says why, `marked_at` when it was said.
    sa.Column("unrealistic", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("unrealistic_note", sa.Text, nullable=True),
    sa.Column("marked_at", UtcDateTime, nullable=True),
    sa.UniqueConstraint("persona_id"),
    sa.Index(None, "prompt_path"),
)

# Who is executing a run right now (migration 0004): one row per run while a `polygon run`
# holds it, renewed while the run goes on and deleted when it ends. A second run or resume of
# a leased run is refused; a crashed one leaves its row, which may be taken once it expires.
run_leases = sa.Table(
    "run_leases",
    metadata,
    sa.Column(
        "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("owner", sa.Text, nullable=False),
    sa.Column("acquired_at", UtcDateTime, nullable=False),
    sa.Column("expires_at", UtcDateTime, nullable=False),
)

# Parameter sweeps (migration 0007, SWEEP-2): one row per `polygon sweep`, one per point.
# A point's `profile` is its immutable configuration, `profile_hash` its content hash, and
# `run_key` the hash of what else decides its calls (suite version, scenarios, seed, trials):
# a point whose (profile_hash, run_key) is already stored with a finished run reuses it.
sweeps = sa.Table(
    "sweeps",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("config", sa.JSON, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("started_at", UtcDateTime, nullable=False),
    sa.Column("finished_at", UtcDateTime, nullable=True),
    sa.Index(None, "started_at"),
)

sweep_points = sa.Table(
    "sweep_points",
    metadata,
    sa.Column("pk", BigIntPk, primary_key=True, autoincrement=True),
    sa.Column(
        "sweep_id", sa.String(64), sa.ForeignKey("sweeps.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("idx", sa.Integer, nullable=False),
    sa.Column("point", sa.JSON, nullable=False),
    sa.Column("profile_hash", sa.String(64), nullable=False),
    sa.Column("profile", sa.JSON, nullable=False),
    sa.Column("run_key", sa.String(64), nullable=False),
    sa.Column("run_id", sa.String(64), nullable=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("estimate", sa.JSON, nullable=True),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.UniqueConstraint("sweep_id", "idx"),
    sa.Index(None, "profile_hash", "run_key"),
)
