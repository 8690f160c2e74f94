"""CMP-3 / CMP-3a: each divergence rule on hand-made conversations."""

from __future__ import annotations

from typing import Any

import pytest

from polygon_voice.compare import divergence, wording_similarity
from polygon_voice.model.trace import (
    CallEnd,
    CallStatus,
    ConversationResult,
    EndReason,
    Speaker,
    StatusChange,
    ToolCall,
    Turn,
)

AGENT, CALLER = Speaker.AGENT, Speaker.CALLER


def conv(
    turns: list[tuple[Speaker, str]],
    calls: list[tuple[float, str, dict[str, Any]]] | None = None,
    end: EndReason = EndReason.AGENT_HANGUP,
) -> ConversationResult:
    """Turn i spans [10*i, 10*i + 5]; there is no trace, so calls are placed by time: the
    agent turn spoken when the call was prepared, else the last turn begun before it."""
    return ConversationResult(
        id="c",
        scenario_id="s",
        seed=0,
        language="en",
        end=CallEnd(reason=end, time=10.0 * len(turns)),
        turns=[
            Turn(index=i, speaker=s, text=t, heard=t, start=10.0 * i, end=10.0 * i + 5)
            for i, (s, t) in enumerate(turns)
        ],
        tool_calls=[
            ToolCall(
                call_id=f"k{n}",
                tool=tool,
                args=args,
                history=[StatusChange(status=CallStatus.PREPARED, time=at)],
            )
            for n, (at, tool, args) in enumerate(calls or [])
        ],
        state_updates=[],
        backend_writes=[],
        trace=[],
    )


BASE = [
    (AGENT, "Hello, thank you for calling the order line."),
    (CALLER, "I would like to change my delivery address please."),
    (AGENT, "Of course, what is your order number?"),
]


def test_identical_conversations_never_diverge() -> None:
    a = conv(BASE, [(15.0, "lookup", {"id": 1})])
    point = divergence(a, conv(BASE, [(15.0, "lookup", {"id": 1})]))
    assert (point.turn, point.rule) == (None, None)


def test_tool_calls_rule_names_the_turn_the_calls_belong_to() -> None:
    a = conv(BASE, [(15.0, "lookup", {"id": 1})])
    b = conv(BASE, [(15.0, "lookup", {"id": 2})])
    point = divergence(a, b)
    assert (point.turn, point.rule) == (1, "tool_calls")  # in silence after the caller's turn 1


def test_a_call_prepared_while_the_agent_speaks_belongs_to_that_turn() -> None:
    a = conv(BASE, [(22.0, "lookup", {"id": 1})])
    b = conv(BASE, [(22.0, "lookup", {"id": 2})])
    assert (divergence(a, b).turn, divergence(a, b).rule) == (2, "tool_calls")
    at_the_end = conv(BASE, [(25.0, "lookup", {"id": 1})])  # prepared as turn 2 ends
    assert divergence(at_the_end, b).turn == 2


def test_tool_call_present_in_one_only() -> None:
    point = divergence(conv(BASE, [(5.0, "lookup", {})]), conv(BASE))
    assert (point.turn, point.rule) == (0, "tool_calls")  # prepared as the greeting ended


def test_call_end_when_one_ends_and_the_other_goes_on() -> None:
    longer = [*BASE, (CALLER, "It is one two three four five.")]
    a = conv(BASE, end=EndReason.TRANSFERRED)
    b = conv(longer, end=EndReason.CALLER_HANGUP)
    assert (divergence(a, b).turn, divergence(a, b).rule) == (3, "call_end")


def test_call_end_on_equal_length_with_a_different_end() -> None:
    a, b = conv(BASE, end=EndReason.TRANSFERRED), conv(BASE, end=EndReason.AGENT_HANGUP)
    assert (divergence(a, b).turn, divergence(a, b).rule) == (3, "call_end")


def test_missing_turn_with_the_same_end_is_a_speaker_divergence() -> None:
    longer = [*BASE, (CALLER, "Thanks, bye.")]
    point = divergence(conv(BASE), conv(longer))
    assert (point.turn, point.rule) == (3, "speaker")


def test_speaker_rule() -> None:
    other = [BASE[0], (AGENT, BASE[1][1]), BASE[2]]
    point = divergence(conv(BASE), conv(other))
    assert (point.turn, point.rule) == (1, "speaker")


def test_wording_rule() -> None:
    other = [BASE[0], BASE[1], (AGENT, "Sorry, I cannot help with addresses today.")]
    point = divergence(conv(BASE), conv(other))
    assert (point.turn, point.rule) == (2, "wording")


def test_jaccard_exactly_one_half_does_not_diverge() -> None:
    # Bigrams {a b, b c, c d} vs {a b, b c, c e}: 2 shared of 4 -> exactly 0.5.
    assert wording_similarity("a b c d", "a b c e") == pytest.approx(0.5)
    a = conv([(AGENT, "a b c d")])
    b = conv([(AGENT, "a b c e")])
    assert divergence(a, b).turn is None


def test_jaccard_below_one_half_diverges() -> None:
    # {a b, b c, c d} vs {a b, b x, x d}: 1 shared of 5 -> 0.2.
    assert wording_similarity("a b c d", "a b x d") == pytest.approx(0.2)
    point = divergence(conv([(AGENT, "a b c d")]), conv([(AGENT, "a b x d")]))
    assert (point.turn, point.rule) == (0, "wording")


def test_one_word_turns_compare_word_sets() -> None:
    same = divergence(conv([(CALLER, "Yes.")]), conv([(CALLER, "yes")]))
    assert same.turn is None
    differ = divergence(conv([(CALLER, "Yes.")]), conv([(CALLER, "No.")]))
    assert (differ.turn, differ.rule) == (0, "wording")


def test_one_word_against_many_uses_unigrams() -> None:
    assert wording_similarity("yes", "yes please") == pytest.approx(0.5)
    assert wording_similarity("yes", "yes please do") == pytest.approx(1 / 3)
