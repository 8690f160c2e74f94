"""What a lint gives back: five axes, each a score and the marked places (see docs/lint.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Axis = Literal["overload", "diluted_attention", "contradiction", "ambiguity", "redundancy"]
AXES: tuple[Axis, ...] = (
    "overload",
    "diluted_attention",
    "contradiction",
    "ambiguity",
    "redundancy",
)
TIER_NAMES = {1: "rules", 2: "surprisal", 3: "embeddings", 4: "judge"}


class Finding(BaseModel):
    """One marked place: a span of the prompt, why it was marked, and how much it counts."""

    axis: Axis
    start: int = Field(description="character offset of the first marked character")
    end: int = Field(description="character offset just past the marked text")
    line: int = Field(description="line of `start`, from 1")
    column: int = Field(description="column of `start`, from 1")
    tier: int
    kind: str = Field(description="the rule that found it, e.g. 'vague-wording'")
    weight: float = Field(description="what it adds to the axis score")
    message: str
    confidence: float = Field(
        default=1.0,
        description="how often a finding of this kind was right on the corpus's dev part",
    )


class AxisResult(BaseModel):
    """One axis: score = min(1, sum of its findings' weights), higher is worse."""

    score: float
    findings: list[Finding]


class TierSkip(BaseModel):
    """A tier that did not run, and why (no model configured, extra missing, --max-tier)."""

    tier: int
    name: str
    reason: str
    # A configured tier that broke (server error, timeout, bad answer), not one that cannot
    # run here: told on stderr too. Kept out of the JSON, whose shape is documented.
    failed: bool = Field(default=False, exclude=True)


class LintReport(BaseModel):
    """The whole result of `polygon lint`."""

    language: str
    axes: dict[Axis, AxisResult]
    tiers_run: list[int]
    tiers_skipped: list[TierSkip]
    notes: list[str] = Field(
        default_factory=list, description="what this lint did without (a missing lemmatiser)"
    )
    min_confidence: float = Field(
        default=0.0, description="findings under this confidence are not reported"
    )
    below_confidence: int = Field(
        default=0, description="how many findings were left out for their confidence"
    )

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (docs/lint.md)."""
        return self.model_dump()


def score_axes(findings: list[Finding]) -> dict[Axis, AxisResult]:
    """Group findings by axis in prompt order; each score is the capped sum of weights."""
    axes: dict[Axis, AxisResult] = {}
    for axis in AXES:
        mine = sorted((f for f in findings if f.axis == axis), key=lambda f: (f.start, f.tier))
        # Rounded so that a score reads the same in the terminal, the JSON and the docs.
        score = round(min(1.0, sum(f.weight for f in mine)), 2)
        axes[axis] = AxisResult(score=score, findings=mine)
    return axes
