"""The conversation engine: virtual clock, events and actions, barge-in, loop detection."""

from polygon_voice.conversation.engine import (
    CallSetup,
    ConversationEngine,
    Hearing,
    clear_line,
)
from polygon_voice.conversation.loops import normalised_words, reply_overlap

__all__ = [
    "CallSetup",
    "ConversationEngine",
    "Hearing",
    "clear_line",
    "normalised_words",
    "reply_overlap",
]
