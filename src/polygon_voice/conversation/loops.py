"""Loop detection (LOOP-1, LOOP-2): is the agent saying the same thing again and again?

Two consecutive agent replies *repeat* each other when their normalised words overlap at
least the threshold (LOOP-2: multiset intersection over the longer reply). A repeat ends
the call as a loop unless it is excused, and only three kinds are:

* the first repeat of a reply the caller cut off: the caller did not hear it to the end,
  so saying it once more is the right thing to do; a second repeat is a loop;
* the first repeat of a reply after the caller asked to hear it again ("Sorry, what?",
  "Wie bitte?", conversation/repeats.py): repeating on request is an answer, not a loop;
  a second repeat is;
* a repeat spoken while a tool call the agent sent is still awaited ("One moment,
  please."), at most `IN_FLIGHT_REPEATS` times in one run of repeats: waiting for a tool is
  the one time a voice agent has to fill the line with the same words. The allowance is
  all that stops an agent that says the same line with every call it sends.

A run of repeats is the longest stretch of consecutive replies, each repeating the one
before; a reply that is not a repeat starts a new run.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"\w+")
# Each ASCII byte to itself lower-cased when it is a word character (\w), else to a space
# (no byte above 127 is met: the table reads ASCII text only).
_ASCII_WORD_BYTES = bytes(
    ord(chr(byte).lower()) if byte < 128 and _WORD.fullmatch(chr(byte)) else ord(" ")
    for byte in range(256)
)

IN_FLIGHT_REPEATS = 3
"""Repeats excused in one run while a call is awaited. The longest tool timeout in the
shipped suites is 8 s; an agent that fills every 2-3 s of waiting says its filler about
four times. Counting per run, not per call, keeps an agent that sends call after call from
stalling with the same words forever."""


@dataclass(frozen=True)
class Reply:
    """One agent turn, as the loop rule sees it."""

    text: str
    cut_off: bool = False
    """The caller barged in while the agent was saying it (the turn is `interrupted`)."""
    asked_again: bool = False
    """The caller's turn right before it asked for the last thing to be said again."""
    in_flight: bool = False
    """A tool call the agent sent had no answer yet when the response that spoke it began,
    when one of its `Say`s started, or when it ended: "One moment." after cancelling a call
    for a correction, and "One moment." before the call it announces, both fill a wait."""


@dataclass(frozen=True)
class Loop:
    """The last reply makes a loop: how much it overlaps the one before, how many said."""

    overlap: float
    replies: int

    def message(self) -> str:
        """The call's end message."""
        said = f"the agent said the same reply {self.replies} times in a row"
        return f"{said}; the last two overlap {self.overlap:.0%}"


def normalised_words(text: str) -> list[str]:
    """Lower-case words with punctuation and diacritics stripped."""
    if len(text) <= CACHED_WORDS_CHARS:
        return list(_cached_words(text))
    return _words(text)


CACHED_WORDS_CHARS = 500
"""The checks, the judge's rules and the loop rule each read a turn's words: a turn is split
once (a bounded cache of turns up to this long, so hostile input cannot grow it)."""


def plain_words(text: str) -> list[str]:
    """`normalised_words` without the cache, for a text read once per call (the transcript
    loop rule's pre-check reads every agent reply): the cache's bookkeeping and the list
    copy cost more than splitting a reply that most calls say once."""
    return _words(text)


@functools.lru_cache(maxsize=2048)
def _cached_words(text: str) -> tuple[str, ...]:
    return tuple(_words(text))


def _words(text: str) -> list[str]:
    if text.isascii():  # the common case, and hot (every check that compares replies)
        # NFKD and the combining marks change no ASCII, and there \w is [A-Za-z0-9_]: the
        # words of _WORD.findall(text.lower()), found by a byte table (lower-case letters,
        # every other character a space) and a split, in a fifth of the regex's time.
        return text.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _WORD.findall(stripped)


def reply_overlap(first: str, second: str) -> float:
    """Multiset intersection of normalised words over the longer reply's length (0..1)."""
    a, b = normalised_words(first), normalised_words(second)
    longer = max(len(a), len(b))
    if longer == 0:
        return 0.0
    shared = sum((Counter(a) & Counter(b)).values())
    return shared / longer


def find_loop(replies: Sequence[Reply], threshold: float) -> Loop | None:
    """The loop the last of `replies` (the agent's turns in order) makes, or None.

    The repeats of the run ending with the last reply are weighed in order; one that is not
    excused makes the whole run a loop.
    """
    run = _last_run(replies, threshold)
    in_flight_excused = 0
    for position in range(1, len(run)):
        if position == 1 and (run[0].cut_off or run[1].asked_again):
            continue
        if run[position].in_flight and in_flight_excused < IN_FLIGHT_REPEATS:
            in_flight_excused += 1
            continue
        return Loop(reply_overlap(run[-2].text, run[-1].text), len(run))
    return None


def _last_run(replies: Sequence[Reply], threshold: float) -> list[Reply]:
    """The trailing replies each repeating the one before (at least the last reply)."""
    if not replies:
        return []
    start = len(replies) - 1
    while start > 0 and reply_overlap(replies[start - 1].text, replies[start].text) >= threshold:
        start -= 1
    return list(replies[start:])
