"""Simulated callers: the protocol, the scripted caller and the persona caller (no model)."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
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
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.caller.base": (
                "Caller",
                "CallerMove",
                "CallView",
                "HangUp",
                "Interrupt",
                "Speak",
                "StaySilent",
            ),
            "polygon_voice.caller.persona": ("PersonaCaller",),
            "polygon_voice.caller.scripted": ("ScriptedCaller",),
        },
    )

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
