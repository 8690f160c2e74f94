"""A stored run as the store returns it: kept apart from the conversation and persona records
so that listing runs (`polygon runs`) does not build the conversation models."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from polygon_voice import __version__

RunStatus = Literal["running", "finished", "interrupted", "failed"]
RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus))


def new_run_id() -> str:
    """A fresh run id: 12 hex digits, short enough to type, long enough to be unique."""
    return uuid.uuid4().hex[:12]


def utc(value: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is refused rather than guessed."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"datetime {value.isoformat()} has no time zone; pass an aware one")
    return value.astimezone(UTC)


class RunRecord(BaseModel):
    """One run of a suite against an agent, as stored in the `runs` table."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=64)
    suite: str
    suite_path: str
    suite_hash: str
    agent: str
    seed: int
    status: RunStatus = "running"
    started_at: AwareDatetime
    finished_at: AwareDatetime | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    polygon_version: str = __version__
    conversation_count: int = Field(default=0, description="computed on read; ignored on write")

    @field_validator("started_at", "finished_at")
    @classmethod
    def _to_utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else utc(value)
