"""A sweep file (SWEEP-1): the base configuration, what to vary, how, and the sweep's limits.

Read through the suite reader (the same bounds: size, depth, aliases, numbers) and validated
with pydantic; a mistake is one line naming the file, line and field, as a suite's is.
Every parameter a sweep can vary is a field of `Vary` with its own type and bounds, so a
typo is an unknown field with a did-you-mean, and an out-of-range value names its list item.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from polygon_voice.model.persona import PersonaType
from polygon_voice.model.tools import MAX_SECONDS
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.locate import match_loc, position
from polygon_voice.scenario.parsing import read_data
from polygon_voice.scenario.validation import validation_error

# A sweep is a short experiment: more points than this is a typo in a range, not a plan.
MAX_POINTS = 200
MAX_STEPS = 50
MAX_TRIALS = 100

Temperature = Annotated[float, Field(ge=0, le=2)]
Unit = Annotated[float, Field(ge=0, le=1)]
MaxTokens = Annotated[int, Field(ge=1, le=1_000_000)]
Difficulty = Annotated[int, Field(ge=1, le=5)]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS)]
Text = Annotated[str, Field(min_length=1)]
Scalar = str | int | float | bool

AGENT_PARAMETERS = ("model", "prompt", "temperature", "top_p", "max_tokens")
"""Parameters of a prompt agent (`params.KEY` is any other key of its sampling profile)."""
CONDITIONS = ("noise", "persona_type", "difficulty", "tool_fault_rate", "latency")
"""Test conditions: applied to the suite (or the run) whatever the agent is."""
SAMPLING = ("temperature", "top_p", "max_tokens")
INTEGER_PARAMETERS = frozenset({"max_tokens", "difficulty"})

T = TypeVar("T")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Range(_Strict, Generic[T]):
    """`steps` evenly spaced values from `from` to `to`, both included."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, allow_inf_nan=False, populate_by_name=True
    )

    start: T = Field(alias="from")
    to: T
    steps: int = Field(ge=2, le=MAX_STEPS)


class Axis(_Strict, Generic[T]):
    """The values one parameter takes: a list, or a range of numbers."""

    values: list[T] | None = Field(default=None, min_length=1, max_length=MAX_POINTS)
    range: Range[T] | None = None

    @model_validator(mode="after")
    def _one_of(self) -> Axis[T]:
        if (self.values is None) == (self.range is None):
            raise ValueError("give exactly one of 'values' or 'range'")
        return self


class Vary(_Strict):
    """The parameters a sweep varies; each is optional, at least one is given."""

    model: Axis[Text] | None = None
    prompt: Axis[Text] | None = Field(default=None, description="system prompt files")
    temperature: Axis[Temperature] | None = None
    top_p: Axis[Unit] | None = None
    max_tokens: Axis[MaxTokens] | None = None
    params: dict[str, Axis[Scalar]] = Field(
        default_factory=dict, description="any other key of the sampling profile"
    )
    noise: Axis[Unit] | None = None
    persona_type: Axis[PersonaType] | None = None
    difficulty: Axis[Difficulty] | None = None
    tool_fault_rate: Axis[Unit] | None = None
    latency: Axis[Seconds] | None = None


class Base(_Strict):
    """The configuration every point starts from."""

    agent: Text = Field(description="an agent spec: prompt:agent.yaml, reference:robust, ...")
    model: Text | None = None
    base_url: Text | None = None
    prompt: Text | None = Field(default=None, description="a system prompt file")
    temperature: Temperature | None = None
    top_p: Unit | None = None
    max_tokens: MaxTokens | None = None
    params: dict[str, Scalar] = Field(default_factory=dict)
    noise: Unit | None = None
    persona_type: PersonaType | None = None
    difficulty: Difficulty | None = None
    tool_fault_rate: Unit | None = None
    latency: Seconds | None = None


class Floor(_Strict):
    """The least a first point must score for the sweep to go on (SWEEP-3)."""

    composite: float | None = Field(default=None, ge=0, le=100)
    pass_rate: Unit | None = None

    @model_validator(mode="after")
    def _one_of(self) -> Floor:
        if (self.composite is None) == (self.pass_rate is None):
            raise ValueError("give exactly one of 'composite' or 'pass_rate'")
        return self

    def describe(self) -> str:
        """`composite 60` or `pass rate 0.5`."""
        if self.composite is not None:
            return f"composite {self.composite:g}"
        return f"pass rate {self.pass_rate:g}"


Strategy = Literal["one-at-a-time", "grid", "random"]


class SweepFile(_Strict):
    """The file's content."""

    name: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:-]+$")
    description: str = ""
    base: Base
    suite: Text = Field(description="a suite file (relative to this file) or a built-in suite")
    scenarios: list[Text] = Field(default_factory=list, description="glob patterns on ids")
    vary: Vary
    strategy: Strategy = "one-at-a-time"
    points: int | None = Field(default=None, ge=1, le=MAX_POINTS, description="random only")
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    trials: int = Field(default=1, ge=1, le=MAX_TRIALS)
    floor: Floor | None = None
    token_limit: int | None = Field(default=None, ge=1, description="tokens per point at most")


@dataclass(frozen=True)
class LoadedSweep:
    """A validated sweep file, where it is and its folder (relative files resolve there)."""

    sweep: SweepFile
    path: Path
    base_dir: Path


def load_sweep(path: str | Path) -> LoadedSweep:
    """Read and validate a sweep file; SuiteError names the file, line and field."""
    file = str(path)
    given = Path(path)
    data, root = read_data(given, file)
    if not isinstance(data, dict):
        raise SuiteError(file, "a sweep file is a mapping with name, base, suite and vary")
    try:
        sweep = SweepFile.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, root, SweepFile, file) from None
    for loc, message in sweep_problems(sweep):
        line, column = position(match_loc(root, loc).node(root))
        field = ".".join(str(part) for part in loc)
        raise SuiteError(file, message, line=line, column=column, field=field)
    resolved = given.resolve()
    return LoadedSweep(sweep=sweep, path=resolved, base_dir=resolved.parent)


def varied(vary: Vary) -> dict[str, Axis[Any]]:
    """The varied parameters by name, in the file's order; profile keys as `params.KEY`."""
    named: dict[str, Axis[Any]] = {}
    for name in vary.model_fields_set:
        if name == "params":
            named.update({f"params.{key}": axis for key, axis in vary.params.items()})
            continue
        axis = getattr(vary, name)
        if axis is not None:
            named[name] = axis
    order = list(Vary.model_fields)
    return dict(sorted(named.items(), key=lambda item: order.index(item[0].split(".")[0])))


def sweep_problems(sweep: SweepFile) -> list[tuple[tuple[str, ...], str]]:
    """What pydantic cannot see field by field: (where, why) for each problem, in order."""
    problems: list[tuple[tuple[str, ...], str]] = []
    axes = varied(sweep.vary)
    if not axes:
        problems.append((("vary",), "name at least one parameter to vary"))
    for name, axis in axes.items():
        where = ("vary", *name.split(".", 1))
        if axis.range is not None and not _numeric(axis.range.start):
            problems.append(((*where, "range"), "a range needs numbers; give 'values'"))
        elif axis.range is not None and axis.range.start == axis.range.to:
            problems.append(((*where, "range"), "'from' and 'to' are equal: give one value"))
    prompt_agent = sweep.base.agent.startswith("prompt:")
    agent_keys = [n for n in axes if n in AGENT_PARAMETERS or n.startswith("params.")]
    agent_keys += [
        n for n in (*AGENT_PARAMETERS, "base_url", "params") if n in sweep.base.model_fields_set
    ]
    if agent_keys and not prompt_agent:
        problems.append(
            (
                ("base", "agent"),
                f"{agent_keys[0]} is a prompt agent's parameter; base.agent is "
                f"{sweep.base.agent}, not a prompt:FILE agent",
            )
        )
    if sweep.strategy == "random" and sweep.points is None:
        problems.append((("strategy",), "the random strategy needs 'points: N'"))
    if sweep.strategy != "random" and sweep.points is not None:
        problems.append((("points",), "'points' goes with strategy: random"))
    return problems


def _numeric(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
