"""What the three-layer checks produce (stage: checks): six axes, a root cause, a gate."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AXES = (
    "captured",
    "active_state_correct",
    "tool_args_correct",
    "stale_write_prevented",
    "backend_correct",
    "confirmation_matches_backend",
)


class Layer(StrEnum):
    """The layer a root cause says to repair."""

    CONVERSATION = "conversation"
    EXECUTION = "execution"
    STATE = "state"


class AxisVerdict(BaseModel):
    """One axis: whether it holds, and in words why (or why not)."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    why: str


class RootCause(BaseModel):
    """Why a case failed, derived from the trace, with the evidence it rests on."""

    model_config = ConfigDict(extra="forbid")

    cause: str
    layer: Layer | None = Field(description="the layer to repair; None when unclassified")
    evidence: dict[str, Any] = Field(default_factory=dict)


class CaseScore(BaseModel):
    """The six axes of one three-layer case; never averaged (AX-7)."""

    model_config = ConfigDict(extra="forbid")

    stage: Literal["checks"] = "checks"
    case_id: str
    category: str
    axes: dict[str, AxisVerdict]
    e2e: bool
    root_cause: RootCause | None = None
    gate_breaks: list[str] = Field(
        default_factory=list, description="release-gate checks this case breaks (REL-1..4)"
    )
    not_exercised: str | None = Field(
        default=None,
        description=(
            "why the case did not play as written or could not be won by any agent; such a "
            "case is the suite's problem: no root cause, no gate break, counted apart"
        ),
    )

    def passed(self, axis: str) -> bool:
        """Whether the named axis holds."""
        return self.axes[axis].passed
