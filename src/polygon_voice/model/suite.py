"""A suite file: tools, backend records, scenarios with scripted callers, engine settings."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from polygon_voice.model.case import CaseCategory, CaseExpected
from polygon_voice.model.events import InterruptPoint
from polygon_voice.model.expect import Expect
from polygon_voice.model.persona import Persona
from polygon_voice.model.tools import MAX_SECONDS, FaultSpec, ToolSpec

Record = dict[str, Any]


class _Spec(BaseModel):
    # NaN and infinity are no times or levels (and JSON cannot store them).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class BargeInStep(_Spec):
    """Talk over the agent at a named point; without `say` it is background noise (no words)."""

    at: InterruptPoint
    say: str | None = None
    tool: str | None = Field(
        default=None,
        description="during_tool_prep / after_tool_fired: fire only for a call to this tool",
    )
    on_call: int | None = Field(
        default=None, ge=1, description="with `tool`: fire only at the Nth call to that tool"
    )

    @model_validator(mode="after")
    def _tool_needs_a_tool_point(self) -> BargeInStep:
        if self.tool is not None and self.at is InterruptPoint.MID_SPEECH:
            raise ValueError(
                "'tool' goes with during_tool_prep or after_tool_fired, not mid_speech"
            )
        if self.on_call is not None and self.tool is None:
            raise ValueError("'on_call' needs 'tool': the Nth call to which tool?")
        return self


class ScriptStep(_Spec):
    """One move of the scripted caller: exactly one of `say`, `barge_in`, `silence`, `hangup`."""

    say: str | None = None
    barge_in: BargeInStep | None = None
    silence: bool = False
    hangup: bool = False

    @model_validator(mode="after")
    def _exactly_one(self) -> ScriptStep:
        given = [
            self.say is not None,
            self.barge_in is not None,
            self.silence,
            self.hangup,
        ]
        if sum(given) != 1:
            raise ValueError("a script step takes exactly one of: say, barge_in, silence, hangup")
        return self


class Scenario(_Spec):
    """One simulated call: who calls, what they say, and (for three-layer cases) what must hold."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")
    description: str = ""
    persona: Persona = Field(default_factory=Persona)
    persona_ref: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description=(
            "the id of a stored persona (`polygon personas list`), used instead of `persona`; "
            "resolved from the database when the suite runs"
        ),
    )
    caller: Literal["auto", "scripted", "persona", "llm"] = Field(
        default="auto",
        description=(
            "who plays the caller: scripted (the script, exactly), persona (the deterministic "
            "persona engine), llm (a model plays the persona); auto = scripted when there is "
            "a script, else persona"
        ),
    )
    script: list[ScriptStep] = Field(default_factory=list)
    category: CaseCategory | None = None
    setup: dict[str, Any] = Field(default_factory=dict, description="loose on purpose (CASE-1)")
    expected: CaseExpected | None = None
    expect: Expect | None = Field(
        default=None,
        description=(
            "what must have happened by the end of the call: backend records, tool calls, "
            "facts said, the ending; checked from the write log and the trace"
        ),
    )
    backend: dict[str, dict[str, Record]] = Field(
        default_factory=dict, description="records added to or replacing the suite's for this call"
    )
    faults: dict[str, list[FaultSpec]] = Field(
        default_factory=dict, description="tool name -> faults added for this call only"
    )
    forbidden_phrases: list[str] = Field(default_factory=list)
    max_turns: int | None = Field(default=None, ge=1)
    noise: float | None = Field(
        default=None, ge=0, le=1, description="recognition noise level for this call (0..1)"
    )

    @model_validator(mode="after")
    def _one_persona(self) -> Scenario:
        # A resolved scenario carries both (the copy skips validation); a file gives one.
        if self.persona_ref is not None and "persona" in self.model_fields_set:
            raise ValueError(
                "give either 'persona' or 'persona_ref' (a stored persona's id), not both"
            )
        return self


class EngineSettings(_Spec):
    """Timing and limits of the conversation engine (virtual seconds unless noted)."""

    max_turns: int = Field(default=40, ge=1, description="caller and agent turns together")
    words_per_second: float = Field(default=2.5, gt=0, description="speaking rate of both sides")
    response_gap: float = Field(
        default=0.3, ge=0, le=MAX_SECONDS, description="pause before the caller answers"
    )
    silence_seconds: float = Field(
        default=4.0, gt=0, le=MAX_SECONDS, description="what a silent caller step lasts"
    )
    agent_turn_timeout: float = Field(
        default=10.0,
        gt=0,
        le=MAX_SECONDS,
        description="wall-clock seconds an agent may take for one response",
    )
    loop_overlap: float = Field(default=0.9, gt=0, le=1, description="LOOP-1 threshold")
    noise: float = Field(
        default=0.0, ge=0, le=1, description="recognition noise level 0..1 (0: heard as said)"
    )
    # Limits on what an agent sends (docs/agents.md, "Limits and failures"): over one, the
    # agent's call ends with reason `error`; the rest of the run is unaffected.
    max_say_chars: int = Field(
        default=10_000, ge=1, description="characters an agent may say in one response"
    )
    max_actions_per_turn: int = Field(
        default=1_000, ge=1, description="actions an agent may yield in one response"
    )
    max_reply_bytes: int = Field(
        default=1_000_000, ge=1, description="bytes of one HTTP agent's answer to one event"
    )
    max_agent_connections: int = Field(
        default=64, ge=1, description="HTTP agent requests open at once in a run"
    )


class Suite(_Spec):
    """A suite file."""

    name: str = Field(min_length=1)
    description: str = ""
    agent: str | None = Field(
        default=None, description="default agent: registry name or module:attr"
    )
    language: str = "en"
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    backend: dict[str, dict[str, Record]] = Field(
        default_factory=dict, description="collection -> record key -> fields"
    )
    forbidden_phrases: list[str] = Field(default_factory=list)
    settings: EngineSettings = Field(default_factory=EngineSettings)
    repeat: int = Field(default=1, ge=1, description="conversations per scenario")
    scenarios: list[Scenario] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Suite:
        seen: set[str] = set()
        for scenario in self.scenarios:
            if scenario.id in seen:
                raise ValueError(f"scenario id {scenario.id!r} is used twice")
            seen.add(scenario.id)
        return self

    @model_validator(mode="after")
    def _references_exist(self, info: ValidationInfo) -> Suite:
        # The loader checks the same references itself to name the line; built in code, the
        # first unknown name is refused here.
        if info.context and info.context.get("references_checked_by_loader"):
            return self
        from polygon_voice.scenario.references import reference_problems

        for loc, message in reference_problems(self):
            where = ".".join(str(part) for part in loc)
            raise ValueError(f"{where}: {message}")
        return self
