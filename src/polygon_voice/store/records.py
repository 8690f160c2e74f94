"""What the store keeps besides ConversationResult: runs and conversation summaries."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from polygon_voice import __version__
from polygon_voice.model.persona import Persona
from polygon_voice.model.trace import ConversationResult

RunStatus = Literal["running", "finished", "interrupted", "failed"]
RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus))


def new_run_id() -> str:
    """A fresh run id: 12 hex digits, short enough to type, long enough to be unique."""
    return uuid.uuid4().hex[:12]


def new_persona_id() -> str:
    """A fresh persona id: `p-` and 8 hex digits, short enough to write into a suite file."""
    return "p-" + uuid.uuid4().hex[:8]


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


class ConversationSummary(BaseModel):
    """The columns of a stored conversation, read without parsing its JSON."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    scenario_id: str
    index: int
    end_reason: str
    end_message: str
    turn_count: int
    tool_call_count: int


class PersonaRecord(BaseModel):
    """A stored persona: the persona itself and the prompt version it was generated from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    persona: Persona
    prompt_path: str
    prompt_hash: str
    generator: str = Field(description='"deterministic" or "llm:<model>"')
    created_at: AwareDatetime
    updated_at: AwareDatetime

    @field_validator("created_at", "updated_at")
    @classmethod
    def _to_utc(cls, value: datetime) -> datetime:
        return utc(value)


class PersonaConversation(BaseModel):
    """One stored conversation a persona played, and whether its current version played it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    persona_id: str
    current_version: bool
    conversation: ConversationResult
