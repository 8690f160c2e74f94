"""How a real (imported) call ended, as the judge reads it: the source's end, or a loop the
transcript shows.

A simulated call is ended by the engine at its agent's first unexcused repeat (LOOP-1), so
its end says `loop_detected`. A real call ran to whatever end its platform gave it: a loop
is only in the transcript. It is read with the engine's rule and excuses (conversation/
loops.py), but a run must hold at least `LOOP_REPLIES` replies: the whole run is on record,
and a reply said twice (a closing line, "Okay.") is too little to call the call broken.
"""

from __future__ import annotations

from collections import Counter

from polygon_voice.checks.facts import CallFacts
from polygon_voice.conversation.loops import Loop, Reply, find_loop, plain_words
from polygon_voice.conversation.repeats import is_repeat_request
from polygon_voice.model import CallEnd, ConversationResult, EndReason, Speaker, Turn

LOOP_REPLIES = 3
LOOP_OVERLAP = 0.9
"""The engine's default LOOP-1 threshold (suite settings `loop_overlap`)."""


def transcript_loop(result: ConversationResult, facts: CallFacts | None = None) -> Loop | None:
    """The first run of at least LOOP_REPLIES agent replies, each repeating the one before,
    that the engine would not excuse; None when there is none (`facts`: the call's turns as
    the judge already read them)."""
    turns = facts.ordered if facts is not None and facts.belongs_to(result) else None
    if turns is None:
        turns = sorted(result.turns, key=lambda t: t.index)
    if not _repeats_in_a_row(turns, LOOP_REPLIES):
        return None
    replies: list[Reply] = []
    asked = False
    for turn in turns:
        if turn.speaker is Speaker.CALLER:
            asked = is_repeat_request(turn.heard)
            continue
        replies.append(Reply(turn.text, cut_off=turn.interrupted, asked_again=asked))
        asked = False
        loop = find_loop(replies, LOOP_OVERLAP)
        if loop is not None and loop.replies >= LOOP_REPLIES:
            return loop
    return None


def _repeats_in_a_row(turns: list[Turn], count: int) -> bool:
    """Whether some `count` agent replies in a row each repeat the one before: what any loop
    of `count` replies needs. A cheap pass that lets the common call, without such a run,
    skip the loop search, which weighs every run anew."""
    replies = [plain_words(t.text) for t in turns if t.speaker is not Speaker.CALLER]
    # Each reply's distinct words, made when a pair of the same length is first compared.
    distinct: list[frozenset[str] | None] = [None] * len(replies)
    run = 1
    for position in range(1, len(replies)):
        if _repeated_by(replies, distinct, position):
            run += 1
            if run >= count:
                return True
        else:
            run = 1
    return False


def _repeated_by(
    replies: list[list[str]], distinct: list[frozenset[str] | None], position: int
) -> bool:
    """Whether conversation.loops.reply_overlap of the reply at `position` and the one before
    reaches LOOP_OVERLAP."""
    mine, theirs = replies[position - 1], replies[position]
    mine_count, their_count = len(mine), len(theirs)
    shorter, longer = min(mine_count, their_count), max(mine_count, their_count)
    # The shared words are at most the shorter reply's.
    if not longer or shorter / longer < LOOP_OVERLAP:
        return False
    # Each distinct word one reply has and the other lacks takes at least one of its words
    # out of the shared count: a bound from the distinct words both have (one set operation
    # in C), which tells most pairs apart before any word is counted.
    mine_set = distinct[position - 1]
    if mine_set is None:
        mine_set = distinct[position - 1] = frozenset(mine)
    their_set = distinct[position]
    if their_set is None:
        their_set = distinct[position] = frozenset(theirs)
    both = len(mine_set & their_set)
    # len(mine_set - their_set) is len(mine_set) - both, and the same for theirs.
    bound = min(mine_count - len(mine_set) + both, their_count - len(their_set) + both)
    if bound / longer < LOOP_OVERLAP:
        return False
    return (Counter(mine) & Counter(theirs)).total() / longer >= LOOP_OVERLAP


def real_call_end(result: ConversationResult, facts: CallFacts | None = None) -> CallEnd:
    """The call's end, or `loop_detected` when the transcript shows a loop before it."""
    if result.end.reason in (EndReason.ERROR, EndReason.LOOP_DETECTED):
        return result.end
    loop = transcript_loop(result, facts)
    if loop is None:
        return result.end
    message = f"{loop.message()} (read from the transcript)"
    return CallEnd(reason=EndReason.LOOP_DETECTED, time=result.end.time, message=message)
