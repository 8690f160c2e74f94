"""How a stub tool is declared in a suite file (TOOL-1..4)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Times are virtual seconds: finite (no NaN or infinity, which would spin or break the
# stored record), never negative, and at most a day, so sums of them stay exact enough.
MAX_SECONDS = 86_400.0


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class FaultKind(StrEnum):
    """Ways a stub fails on purpose (TOOL-3)."""

    TIMEOUT = "timeout"
    EMPTY_RESULT = "empty_result"
    WRONG_RECORD = "wrong_record"
    HTTP_500 = "http_500"
    LATE_SUCCESS = "late_success"
    DUPLICATE_WRITE = "duplicate_write"


class FaultSpec(_Spec):
    """One fault: on the Nth call of the tool (`on_call`), or at a seeded `rate` per call."""

    kind: FaultKind
    on_call: int | None = Field(default=None, ge=1, description="1-based call number")
    rate: float | None = Field(default=None, ge=0, le=1)
    write_lands: bool | None = Field(
        default=None,
        description=(
            "Whether the call's write reaches the backend despite the fault. Defaults: "
            "true for late_success and duplicate_write, false for the others."
        ),
    )
    delay: float = Field(
        default=45.0,
        gt=0,
        le=MAX_SECONDS,
        description="late_success: seconds from the write to the success report",
    )
    record: Any = Field(default=None, description="wrong_record: the answer to return instead")
    latency: float | None = Field(
        default=None,
        ge=0,
        le=MAX_SECONDS,
        description="this call's latency in seconds, instead of the tool's",
    )

    @model_validator(mode="after")
    def _one_trigger(self) -> FaultSpec:
        if (self.on_call is None) == (self.rate is None):
            raise ValueError("give exactly one of 'on_call' or 'rate'")
        return self

    def lands(self) -> bool:
        """Whether the write lands under this fault."""
        if self.write_lands is not None:
            return self.write_lands
        return self.kind in (FaultKind.LATE_SUCCESS, FaultKind.DUPLICATE_WRITE)


class UniformLatency(_Spec):
    """Latency drawn uniformly between `low` and `high` seconds."""

    distribution: Literal["uniform"]
    low: float = Field(ge=0, le=MAX_SECONDS)
    high: float = Field(ge=0, le=MAX_SECONDS)

    @model_validator(mode="after")
    def _ordered(self) -> UniformLatency:
        if self.high < self.low:
            raise ValueError("'high' must not be below 'low'")
        return self


class LognormalLatency(_Spec):
    """Latency with a long tail: log-normal around `median` seconds."""

    distribution: Literal["lognormal"]
    median: float = Field(gt=0, le=MAX_SECONDS)
    sigma: float = Field(default=0.5, ge=0, le=10)


LatencySpec = (
    Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
    | Annotated[UniformLatency | LognormalLatency, Field(discriminator="distribution")]
)


class FixedStub(_Spec):
    """Always the same answer."""

    kind: Literal["fixed"]
    returns: Any = None


class TemplateStub(_Spec):
    """An answer with `{arg}` placeholders filled from the call's arguments."""

    kind: Literal["template"]
    returns: Any = None


class Rule(_Spec):
    """Answer `returns` when every argument named in `when` equals its value."""

    when: dict[str, Any] = Field(default_factory=dict)
    returns: Any = None


class RulesStub(_Spec):
    """The first matching rule answers (templates allowed); else `default`."""

    kind: Literal["rules"]
    rules: list[Rule] = Field(default_factory=list)
    default: Any = None


class StatefulStub(_Spec):
    """Reads or writes a record of the versioned backend."""

    kind: Literal["stateful"]
    collection: str
    op: Literal["get", "update", "create", "delete"]
    key: str = Field(description="the argument that holds the record key")
    fields: list[str] | None = Field(
        default=None, description="arguments written by update/create (default: all but the key)"
    )


StubSpec = Annotated[
    FixedStub | TemplateStub | RulesStub | StatefulStub, Field(discriminator="kind")
]


class ToolSpec(_Spec):
    """One tool the agent may call, and the stub that stands in for it."""

    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object"}, description="JSON Schema of the arguments"
    )
    stub: StubSpec
    latency: LatencySpec = 0.3
    timeout: float = Field(
        default=30.0, gt=0, le=MAX_SECONDS, description="seconds before the call times out"
    )
    faults: list[FaultSpec] = Field(default_factory=list)
