"""Format detection: auto asks each format in order; a forced format skips it."""

from __future__ import annotations

import pytest

from polygon_voice.imports import RecordError
from polygon_voice.imports.detect import Detector, UnknownFormat, format_names

CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_auto_picks_the_format_that_recognises_the_record() -> None:
    detector = Detector.for_name("auto")
    assert detector.choose(CHAT).name == "openai"
    assert detector.choose("speaker,text\nagent,hi\n").name == "csv"
    assert detector.choose("Agent: hi\nCaller: yo\n").name == "lines"
    assert detector.is_record(CHAT)
    assert not detector.is_record([{"id": 1}, {"id": 2}])


def test_a_record_no_format_knows_lists_what_was_looked_for() -> None:
    with pytest.raises(RecordError) as caught:
        Detector.for_name("auto").choose({"foo": 1})
    assert "matches no known format" in caught.value.message
    for name in ("polygon", "openai", "csv", "lines"):
        assert name in caught.value.message


def test_a_forced_format_skips_detection() -> None:
    detector = Detector.for_name("lines")
    assert detector.choose({"anything": 1}).name == "lines"


def test_an_unknown_format_lists_the_names() -> None:
    with pytest.raises(UnknownFormat) as caught:
        Detector.for_name("vapy")
    for name in format_names():
        assert name in str(caught.value)


def test_the_agent_label_reaches_the_formats_that_take_one() -> None:
    detector = Detector.for_name("csv", agent_label="Maya")
    call = detector.choose("").parse("speaker,text\nMaya,hi\nBob,yo\n")
    assert [t.speaker for t in call.turns] == ["agent", "caller"]


def test_every_format_has_a_name_a_description_and_never_raises_in_detect() -> None:
    for fmt in Detector.for_name("auto").formats:
        assert fmt.name
        assert fmt.description
        for value in (None, 1, "x", [], {}, [None], {"messages": None}, {"stage": "conversation"}):
            assert isinstance(fmt.detect(value), bool)


def test_the_research_corpora_are_asked_before_the_generic_chat_shape() -> None:
    names = format_names()
    for name in ("taubench", "sgd", "taskmaster", "abcd"):
        assert names.index(name) < names.index("openai")
    # A tau-bench trajectory carries chat messages under `traj`: it is taubench, not openai.
    trajectory = {"task_id": 3, "traj": CHAT, "reward": 1.0}
    detector = Detector.for_name("auto")
    assert detector.choose(trajectory).name == "taubench"
    assert detector.choose({"dialogue_id": "1_1", "turns": []}).name == "sgd"
    assert detector.choose({"conversation_id": "dlg-1", "utterances": []}).name == "taskmaster"
    assert detector.choose({"convo_id": 1, "original": []}).name == "abcd"
    assert detector.ambiguous == {}
    # ElevenLabs' conversation has a conversation_id too, but a transcript, not utterances.
    assert detector.choose({"conversation_id": "c1", "transcript": []}).name == "elevenlabs"
