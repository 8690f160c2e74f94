"""Simulated callers: the protocol, the scripted caller and the persona caller (no model)."""

from polygon_voice.caller.base import (
    Caller,
    CallerMove,
    CallView,
    HangUp,
    Interrupt,
    Speak,
    StaySilent,
)
from polygon_voice.caller.persona import PersonaCaller
from polygon_voice.caller.scripted import ScriptedCaller

__all__ = [
    "CallView",
    "Caller",
    "CallerMove",
    "HangUp",
    "Interrupt",
    "PersonaCaller",
    "ScriptedCaller",
    "Speak",
    "StaySilent",
]
