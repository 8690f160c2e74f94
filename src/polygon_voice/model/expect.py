"""What a scenario says must have happened by the end of the call (`expect:`), and what
the expectation check found (stage: expect).

A scenario without `expect:` says nothing about its outcome, so no judge can tell "nothing
done" from "done"; with it, the end state is checked from the write log and the trace.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ExpectedOutcome = Literal["success", "refusal", "callback", "transfer"]

RecordFields = dict[str, Any]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolExpectation(_Spec):
    """A tool call that must (or must not) happen; `args` constrains the named arguments."""

    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "arguments the call must carry (compared as text: 5590 equals '5590'); "
            "arguments not named here may be anything"
        ),
    )


class ToolsExpectation(_Spec):
    """Calls that must be sent, and calls that must never be sent."""

    called: list[ToolExpectation] = Field(
        default_factory=list, description="each must be matched by at least one sent call"
    )
    not_called: list[ToolExpectation] = Field(
        default_factory=list, description="no sent call may match any of these"
    )
    exactly: list[ToolExpectation] = Field(
        default_factory=list,
        description=(
            "the completed calls to these tools and to those in exactly_among are exactly "
            "these, in any order, each with exactly these arguments (every argument equal, "
            "compared as text: 5590 equals '5590'); an empty list with exactly_among: no "
            "completed call to those tools"
        ),
    )
    exactly_among: list[str] = Field(
        default_factory=list,
        description=(
            "more tools watched by exactly: a completed call to one of them that exactly "
            "does not list breaks it (given alone: no completed call to any of them)"
        ),
    )

    @model_validator(mode="after")
    def _exactly_watches_something(self) -> ToolsExpectation:
        # `exactly_among` alone is `exactly: []` over its tools: no completed call to any
        # (so a dump that leaves out the empty default reads back the same).
        given = "exactly" in self.model_fields_set
        if given and not self.exactly and not self.exactly_among:
            raise ValueError(
                "'exactly: []' watches no tool: name the tools that must not be called in "
                "'exactly_among'"
            )
        return self

    def watched(self) -> list[str]:
        """The tools whose completed calls `exactly` accounts for, in order, once each."""
        listed = [w.tool for w in self.exactly]
        return list(dict.fromkeys([*listed, *self.exactly_among]))


class Expect(_Spec):
    """The scenario's expected outcome; every part is optional, every given part must hold."""

    outcome: ExpectedOutcome | None = Field(
        default=None,
        description=(
            "how the call must end: success (the request done, the call not transferred or "
            "broken), refusal or callback (nothing written), transfer (handed to a person)"
        ),
    )
    backend: dict[str, dict[str, RecordFields | None]] = Field(
        default_factory=dict,
        description=(
            "collection -> record key -> fields that record must hold at the end of the call "
            "(fields not named may be anything); null: the record must not exist"
        ),
    )
    no_write: bool = Field(default=False, description="nothing may be written to the backend")
    writes_at_most: int | None = Field(
        default=None,
        ge=1,
        description=(
            "at most this many write operations may land (one operation: what one call wrote "
            "to one record at one moment); 1 catches a retry that wrote a second time"
        ),
    )
    tools: ToolsExpectation = Field(default_factory=ToolsExpectation)
    says: list[str | int | float] = Field(
        default_factory=list,
        description=(
            "facts the agent must say at some point (numbers and dates in any spoken form: "
            "'3' is also 'three', '2026-12-20' also 'December 20')"
        ),
    )

    @model_validator(mode="after")
    def _consistent(self) -> Expect:
        if self.no_write and self.writes_at_most is not None:
            raise ValueError("give 'no_write: true' or 'writes_at_most', not both")
        if self.no_write and self.backend:
            raise ValueError(
                "'no_write: true' and 'backend' contradict each other: a record can only come "
                "to hold new values by being written"
            )
        return self

    def states_anything(self) -> bool:
        """Whether any expectation is given."""
        return bool(
            self.outcome
            or self.backend
            or self.no_write
            or self.writes_at_most is not None
            or self.tools.called
            or self.tools.not_called
            or bool(self.tools.watched())
            or self.says
        )


class ExpectCheck(BaseModel):
    """One expectation and whether it held, with the reason in words."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        description=(
            "outcome, backend, no_write, writes_at_most, called, not_called, exactly, says"
        )
    )
    passed: bool
    why: str


class ExpectResult(BaseModel):
    """What the expectation check found for one conversation (stage: expect)."""

    model_config = ConfigDict(extra="forbid")

    stage: Literal["expect"] = "expect"
    source: Literal["expect", "case"] = Field(
        description="expect: the scenario's `expect:` block; case: a three-layer case's action"
    )
    met: bool = Field(description="every check held (False when not exercised)")
    checks: list[ExpectCheck] = Field(default_factory=list)
    not_exercised: str | None = Field(
        default=None,
        description="the scenario did not play as written (the suite's problem, not the agent's)",
    )

    def failed(self) -> list[ExpectCheck]:
        """The checks that did not hold."""
        return [c for c in self.checks if not c.passed]
