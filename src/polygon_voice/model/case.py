"""The three-layer test case fields of SPEC 9.2: loose setup, strict expectations."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class CaseCategory(StrEnum):
    """The failure-mode family a case belongs to (SPEC 9.1)."""

    CORRECTION = "correction"
    INTERRUPTION = "interruption"
    TOOL_ERROR = "tool_error"
    STATE_CONFLICT = "state_conflict"


class CaseExpected(BaseModel):
    """What a correct system does on every layer; strict so it can be scored automatically."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    captured: bool
    active_state_correct: bool
    tool_args_correct: bool
    stale_write_prevented: bool
    backend_correct: bool
    confirmation_matches_backend: bool
    should_execute: bool
