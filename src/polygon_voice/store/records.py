"""What the store keeps besides ConversationResult: runs and conversation summaries."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from polygon_voice.model.persona import Persona
from polygon_voice.model.trace import ConversationResult

# The run record lives in its own light module (`polygon runs` reads it alone).
from polygon_voice.store.run_record import RUN_STATUSES, RunRecord, RunStatus, new_run_id, utc

__all__ = [
    "RUN_STATUSES",
    "ConversationSummary",
    "PersonaConversation",
    "PersonaRecord",
    "RunRecord",
    "RunStatus",
    "new_persona_id",
    "new_run_id",
    "utc",
]


def new_persona_id() -> str:
    """A fresh persona id: `p-` and 8 hex digits, short enough to write into a suite file."""
    return "p-" + uuid.uuid4().hex[:8]


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


class PersonaUsage(BaseModel):
    """What the model requests that made one persona spent: the answered requests (two when
    it was asked again for facts), those from the response cache, tokens and cost."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: int = Field(default=0, ge=0)
    cached: int = Field(default=0, ge=0)
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    cost: float = Field(default=0.0, ge=0)

    def line(self) -> str:
        """`2 requests (0 cached), 812 tokens in, 95 out`, and the cost when priced."""
        text = (
            f"{self.requests} requests ({self.cached} cached), {self.tokens_in} tokens in, "
            f"{self.tokens_out} out"
        )
        return f"{text}, ${self.cost:.4f}" if self.cost else text


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
    usage: PersonaUsage | None = None  # None: made without a model (or stored before 0005)
    # Marked by a person as not like a real caller (READ-2): left out of later runs.
    unrealistic: bool = False
    unrealistic_note: str | None = None
    marked_at: AwareDatetime | None = None  # when it was last marked (either way)

    @field_validator("created_at", "updated_at", "marked_at")
    @classmethod
    def _to_utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else utc(value)


class PersonaConversation(BaseModel):
    """One stored conversation a persona played, and whether its current version played it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    persona_id: str
    current_version: bool
    conversation: ConversationResult
