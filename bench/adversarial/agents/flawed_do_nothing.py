"""Planted flaw: a friendly agent that never does anything.

It greets, thanks the caller for whatever they say and says goodbye when they do; it never
looks anything up, never writes, never reports state. Polite, and useless.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from polygon_voice.agents import AgentContext
from polygon_voice.model import Action, CallerSaid, CallStarted, EndCall, Event, Say

LABEL = "flawed"
FLAW = "do_nothing"
MUST_FAIL = True
SPLIT = "tuning"
DESCRIPTION = "greets, thanks the caller, hangs up; never acts"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

# Three wordings in turn: the flaw is doing nothing, not repeating itself.
THANKS = (
    "Thank you, I have noted that.",
    "Thanks for letting me know, that is very helpful.",
    "I understand. Thank you for explaining.",
)


class Agent:
    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.replies = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Good day, thank you for calling the order desk.")
        elif isinstance(event, CallerSaid):
            if "bye" in event.text.lower() or "that's all" in event.text.lower():
                yield Say(text="Thank you for calling. Goodbye!")
                yield EndCall(reason="caller is done")
                return
            yield Say(text=THANKS[self.replies % len(THANKS)])
            self.replies += 1
