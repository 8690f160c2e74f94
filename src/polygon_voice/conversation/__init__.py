"""The conversation engine: virtual clock, events and actions, barge-in, loop detection."""

from polygon_voice.conversation.engine import (
    CallSetup,
    ConversationEngine,
    Hearing,
    clear_line,
)
from polygon_voice.conversation.loops import (
    IN_FLIGHT_REPEATS,
    Loop,
    Reply,
    find_loop,
    normalised_words,
    reply_overlap,
)

__all__ = [
    "IN_FLIGHT_REPEATS",
    "CallSetup",
    "ConversationEngine",
    "Hearing",
    "Loop",
    "Reply",
    "clear_line",
    "find_loop",
    "normalised_words",
    "reply_overlap",
]
