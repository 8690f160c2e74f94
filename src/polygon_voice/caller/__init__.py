"""Simulated callers: the protocol and the scripted caller (no model needed)."""

from polygon_voice.caller.base import (
    Caller,
    CallerMove,
    CallView,
    HangUp,
    Interrupt,
    Speak,
    StaySilent,
)
from polygon_voice.caller.scripted import ScriptedCaller

__all__ = [
    "CallView",
    "Caller",
    "CallerMove",
    "HangUp",
    "Interrupt",
    "ScriptedCaller",
    "Speak",
    "StaySilent",
]
