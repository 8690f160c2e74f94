"""The simulated caller's persona (SIM-1)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

FactValue = str | int | float | bool


class PersonaType(StrEnum):
    """How the caller behaves on the phone."""

    COOPERATIVE = "cooperative"
    BUSY = "busy"
    DISTRUSTFUL = "distrustful"
    CONFUSED = "confused"
    AGGRESSIVE = "aggressive"
    CHATTY = "chatty"


class Outcome(StrEnum):
    """How the caller intends the call to end."""

    SUCCESS = "success"
    REFUSAL = "refusal"
    CALLBACK = "callback"
    TRANSFER = "transfer"


class Persona(BaseModel):
    """Who the caller is, what they want and what they know (ground truth for the judge)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "caller"
    type: PersonaType = PersonaType.COOPERATIVE
    intended_outcome: Outcome = Outcome.SUCCESS
    difficulty: int = Field(default=1, ge=1, le=5)
    goal: str = ""
    facts: dict[str, FactValue] = Field(default_factory=dict)
    language: str | None = Field(
        default=None, description="Language code (en, de, hr, ru); defaults to the suite's."
    )
