"""What the conversation checks and the deterministic judge's rules read of a call's turns,
read once per call and shared by all of them.

Every check and rule used to walk the turns on its own: the agent's turns, the last one, a
turn by its index, a turn's word count, whether it asks to repeat. An import judges a
thousand calls a second, and those walks were a good part of the judge's time. `CallFacts`
reads each of them once, on first use, from the call's turns as they are; it changes no
reading (each is the same expression the rules used, over the same turns in the same order).

A `CallFacts` belongs to one list of turns (`turns`): `JudgeInput` makes a new one when it is
given a result with other turns (judge/base.py). The turns are not copied, so the record must
not be changed while it is judged (no stage does).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import islice

from polygon_voice.conversation.repeats import repeat_requests
from polygon_voice.model import ConversationResult, Speaker, Turn

# An agent turn above this many words is "over-long" on the phone (~20 s at 2.5 words/s).
LONG_TURN_WORDS = 50


class CallFacts:
    """The per-turn facts of one call, each read on first use."""

    __slots__ = (
        "_agent_asks",
        "_agent_words",
        "_by_index",
        "_caller_asks",
        "_ordered",
        "agent",
        "caller",
        "turns",
    )

    def __init__(self, result: ConversationResult) -> None:
        self.turns: Sequence[Turn] = result.turns
        self.agent: list[Turn] = [t for t in self.turns if t.speaker is Speaker.AGENT]
        self.caller: list[Turn] = [t for t in self.turns if t.speaker is Speaker.CALLER]
        self._ordered: list[Turn] | None = None
        self._by_index: dict[int, Turn] | None = None
        self._agent_words: list[int] | None = None
        self._agent_asks: list[bool] | None = None
        self._caller_asks: list[bool] | None = None

    def belongs_to(self, result: ConversationResult) -> bool:
        """Whether these facts were read from `result`'s turns (the same list)."""
        return self.turns is result.turns

    @property
    def ordered(self) -> list[Turn]:
        """The turns sorted by index (stable): the record's own order when it is sorted."""
        if self._ordered is None:
            turns = list(self.turns)
            # Each index at most the next one's, compared in C rather than pair by pair.
            indices = [t.index for t in turns]
            in_order = all(map(operator.le, indices, islice(indices, 1, None)))
            self._ordered = turns if in_order else sorted(turns, key=lambda t: t.index)
        return self._ordered

    def turn(self, index: int | None) -> Turn | None:
        """The first turn with this index, None when there is none."""
        if index is None:
            return None
        if self._by_index is None:
            # The first turn of each index: the later ones go in first and are overwritten.
            self._by_index = {turn.index: turn for turn in reversed(self.turns)}
        return self._by_index.get(index)

    @property
    def last_agent(self) -> int | None:
        """The index of the agent's last turn, if it spoke."""
        return self.agent[-1].index if self.agent else None

    def agent_after(self, time: float) -> int | None:
        """The first agent turn starting at or after `time`."""
        for turn in self.agent:  # a loop: cheaper than next() over a generator
            if turn.start >= time:
                return turn.index
        return None

    @property
    def agent_words(self) -> list[int]:
        """How many words each agent turn has (whitespace-separated), in order."""
        if self._agent_words is None:
            self._agent_words = [len(t.text.split()) for t in self.agent]
        return self._agent_words

    @property
    def long_agent_turns(self) -> list[int]:
        """The indices of the agent turns over LONG_TURN_WORDS words."""
        counted = zip(self.agent, self.agent_words, strict=True)
        return [t.index for t, n in counted if n > LONG_TURN_WORDS]

    @property
    def agent_asks(self) -> list[bool]:
        """Whether each agent turn asks the caller to repeat (its text), in order."""
        if self._agent_asks is None:
            self._agent_asks = repeat_requests([t.text for t in self.agent])
        return self._agent_asks

    @property
    def caller_asks(self) -> list[bool]:
        """Whether each caller turn asks the agent to repeat (its text), in order."""
        if self._caller_asks is None:
            self._caller_asks = repeat_requests([t.text for t in self.caller])
        return self._caller_asks
