"""The per-call facts (checks/facts.py) and the faster readings the checks and the judge share:
each must read exactly what the plain expression it replaced reads, on any call."""

from __future__ import annotations

import gc
from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.checks.facts import LONG_TURN_WORDS, CallFacts
from polygon_voice.conversation.loops import _WORD, normalised_words, plain_words, reply_overlap
from polygon_voice.conversation.repeats import (
    REPEAT_REQUESTS,
    is_repeat_request,
    repeat_requests,
)
from polygon_voice.imports.base import ImportedCall, ImportedTurn
from polygon_voice.imports.convert import to_conversation
from polygon_voice.judge.base import JudgeInput
from polygon_voice.judge.composite import NOT_APPLICABLE, _many_runs, _one_run, composite
from polygon_voice.judge.real_end import _repeated_by, _repeats_in_a_row
from polygon_voice.judge.rubric import V1, V3
from polygon_voice.model import ConversationResult, Persona, Speaker
from polygon_voice.model.judgement import ConversationChecks

# Words of the repeat phrases among ordinary ones, and separators a transcript has.
PHRASE_WORDS = sorted({w for group in REPEAT_REQUESTS.values() for p in group for w in p.split()})
WORDS = [*PHRASE_WORDS, "the", "order", "5590", "didn't", "Sorry,", "what?", "that.", "ça", "_"]
SEPARATORS = [" ", "  ", ", ", "? ", "-", "'", "\t", "!", "_", "…"]


@st.composite
def utterances(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=10))
    text = ""
    for word in words:
        text += word if draw(st.booleans()) else word.upper()
        text += draw(st.sampled_from(SEPARATORS))
    return text


def plain_repeat_request(text: str) -> bool:
    """The definition: a phrase's normalised words in a row among the text's."""
    words = normalised_words(text)
    for group in REPEAT_REQUESTS.values():
        for phrase in group:
            wanted = normalised_words(phrase)
            n = len(wanted)
            if any(words[i : i + n] == wanted for i in range(len(words) - n + 1)):
                return True
    return False


@settings(max_examples=600, deadline=None)
@given(utterances())
def test_a_repeat_request_is_read_as_its_definition_says(text: str) -> None:
    assert is_repeat_request(text) == plain_repeat_request(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(utterances() | st.sampled_from(["ok", "the order", "İ repeat", ""]), max_size=6))
def test_the_turns_of_a_side_are_read_as_each_turn_alone(texts: list[str]) -> None:
    # All at once when no turn holds a key word, else turn by turn: the same readings.
    assert repeat_requests(texts) == [is_repeat_request(text) for text in texts]


def test_repeat_requests_are_found_in_plain_text_and_at_word_edges_only() -> None:
    assert is_repeat_request("Sorry, I didn't catch that.")
    assert is_repeat_request("COULD you... repeat?")
    assert is_repeat_request("Wie bitte?")
    assert not is_repeat_request("I repeated that order")  # "repeated" is not "repeat"
    assert not is_repeat_request("pardonnez-moi")
    assert not is_repeat_request("The order 5590 is booked.")


@st.composite
def calls(draw: st.DrawFn) -> ConversationResult:
    turns = []
    for _ in range(draw(st.integers(0, 12))):
        length = draw(st.sampled_from([0, 3, LONG_TURN_WORDS, LONG_TURN_WORDS + 1]))
        words = ["word"] * length
        if draw(st.booleans()):
            words.append(draw(st.sampled_from(["could you repeat that", "pardon", "fine"])))
        start = draw(st.floats(0, 100, allow_nan=False))
        turns.append(
            ImportedTurn(
                speaker=draw(st.sampled_from(["agent", "caller"])),
                text=" ".join(words),
                start=start,
                end=start + draw(st.floats(0, 10, allow_nan=False)),
            )
        )
    result = to_conversation(ImportedCall(call_id="c", source_format="test", turns=turns))
    if draw(st.booleans()) and result.turns:  # out of order, with an index given twice
        shuffled = list(reversed(result.turns))
        shuffled[0] = shuffled[0].model_copy(update={"index": shuffled[-1].index})
        result = result.model_copy(update={"turns": shuffled})
    return result


@settings(max_examples=200, deadline=None)
@given(calls(), st.floats(0, 120, allow_nan=False))
def test_the_facts_read_what_the_plain_expressions_read(
    result: ConversationResult, moment: float
) -> None:
    facts = CallFacts(result)
    agent = [t for t in result.turns if t.speaker is Speaker.AGENT]
    caller = [t for t in result.turns if t.speaker is Speaker.CALLER]
    assert facts.agent == agent
    assert facts.caller == caller
    assert facts.ordered == sorted(result.turns, key=lambda t: t.index)
    for index in [None, -1, *(t.index for t in result.turns)]:
        assert facts.turn(index) == next((t for t in result.turns if t.index == index), None)
    assert facts.last_agent == (agent[-1].index if agent else None)
    assert facts.agent_after(moment) == next((t.index for t in agent if t.start >= moment), None)
    assert facts.agent_words == [len(t.text.split()) for t in agent]
    long = [t.index for t in agent if len(t.text.split()) > LONG_TURN_WORDS]
    assert facts.long_agent_turns == long
    assert facts.agent_asks == [is_repeat_request(t.text) for t in agent]
    assert facts.caller_asks == [is_repeat_request(t.text) for t in caller]


def _judge_input(result: ConversationResult, facts: CallFacts | None = None) -> JudgeInput:
    checks = ConversationChecks()
    if facts is None:
        return JudgeInput(result, Persona(name="p"), checks)
    return JudgeInput(result, Persona(name="p"), checks, facts=facts)


def test_the_facts_given_are_kept_only_for_the_turns_they_were_read_from() -> None:
    call = ImportedCall(
        call_id="c", source_format="test", turns=[ImportedTurn(speaker="agent", text="hello")]
    )
    result = to_conversation(call)
    facts = CallFacts(result)
    given = _judge_input(result, facts)
    assert given.facts is facts
    # The end changed, the turns not (how the judge reads a loop): the same facts serve.
    ended = replace(given, result=result.model_copy(update={"end": result.end}))
    assert ended.facts is facts
    other = result.model_copy(update={"turns": []})
    assert replace(given, result=other).facts.agent == []
    assert _judge_input(result).facts.agent == result.turns


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefg"), max_size=20),
    st.lists(st.sampled_from("abcdefg"), max_size=20),
)
def test_the_loop_pre_check_bound_never_turns_away_a_repeat(a: list[str], b: list[str]) -> None:
    longer = max(len(a), len(b))
    overlap = (Counter(a) & Counter(b)).total() / longer if longer else 0.0
    assert _repeated_by([a, b], [None, None], 1) == (longer > 0 and overlap >= 0.9)


REPLIES = ["yes", "yes yes", "the order", "order the", "no", ""]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(REPLIES), max_size=8))
def test_the_loop_pre_check_finds_three_repeats_in_a_row_as_the_plain_reading(
    replies: list[str],
) -> None:
    turns = to_conversation(
        ImportedCall(
            call_id="c",
            source_format="test",
            turns=[ImportedTurn(speaker="agent", text=text) for text in replies],
        )
    ).turns
    plain = any(
        reply_overlap(replies[i], replies[i + 1]) >= 0.9
        and reply_overlap(replies[i + 1], replies[i + 2]) >= 0.9
        for i in range(len(replies) - 2)
    )
    assert _repeats_in_a_row(turns, 3) == plain


@settings(max_examples=400, deadline=None)
@given(st.one_of(utterances(), st.text(st.characters(max_codepoint=127)), st.text()))
def test_a_text_is_split_into_the_words_the_regex_finds(text: str) -> None:
    expected = normalised_words(text) if not text.isascii() else _WORD.findall(text.lower())
    assert plain_words(text) == expected
    assert normalised_words(text) == expected


def test_one_judge_run_combines_as_k_runs_of_one() -> None:
    values: list[Any] = [1, 3, 5, 0, 6, "4", 4.0, 3.5, True, None, NOT_APPLICABLE]
    ids = [c.id for c in V3.criteria]
    for shift in range(len(values)):
        run = {cid: values[(i + shift) % len(values)] for i, cid in enumerate(ids) if i != shift}
        for rubric in (V1, V3):
            one, many = _one_run(rubric, run), _many_runs(rubric, [run])
            assert one == many
            assert [type(o.score) for o in one.values()] == [type(o.score) for o in many.values()]
            assert composite(rubric, one) == composite(rubric, many)


def test_an_import_leaves_the_collector_as_it_found_it(tmp_path: Any) -> None:
    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import Store

    path = tmp_path / "calls.jsonl"
    path.write_text('{"id": "c1", "messages": [{"role": "user", "content": "hi"}]}\n')
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        before, threshold = gc.get_freeze_count(), gc.get_threshold()
        import_calls(store, ImportOptions(paths=(str(path),), format_name="openai"))
        assert gc.get_freeze_count() == before
        assert gc.get_threshold() == threshold  # the young generation's, raised, is restored
        gc.freeze()  # a process that froze its own heap keeps it frozen
        frozen = gc.get_freeze_count()
        import_calls(store, ImportOptions(paths=(str(path),), format_name="openai"))
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
        store.close()
