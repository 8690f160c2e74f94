"""What the behaviour probes produce for one conversation (stage: probes, PROBE-1..3)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ProbeAnswerValue = Literal["yes", "no", "not_applicable"]
Polarity = Literal["desired", "guardrail"]
ProbeSource = Literal["deterministic", "llm"]


class ProbeAnswer(BaseModel):
    """One probe's answer about one conversation, with the quote it rests on."""

    model_config = ConfigDict(extra="forbid")

    id: str
    hash: str = Field(description="content hash of the probe's wording: its version (PROBE-5)")
    polarity: Polarity
    answer: ProbeAnswerValue
    source: ProbeSource = Field(description="who answered: rules (deterministic) or a model")
    evidence: str = ""
    turn: int | None = None
    reason: str = ""

    @property
    def complied(self) -> bool | None:
        """Whether the agent did the right thing; None when the probe did not apply."""
        if self.answer == "not_applicable":
            return None
        return (self.answer == "yes") == (self.polarity == "desired")


class ProbeResults(BaseModel):
    """Every probe's answer for one conversation; kept apart from the judgement (PROBE-3)."""

    model_config = ConfigDict(extra="forbid")

    stage: Literal["probes"] = "probes"
    answers: list[ProbeAnswer] = Field(default_factory=list)
