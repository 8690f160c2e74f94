"""Twilio transcript sentences: channel mapped to agent/caller by an option, times, order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.detect import Detector
from polygon_voice.imports.formats import twilio
from polygon_voice.imports.formats._vendor import MAX_ITEMS
from tests.imports.fixtures.vendor_checks import (
    VENDOR_VALUES,
    error_of,
    load,
    parse_or_error,
    with_value,
)


def test_default_agent_channel_is_one() -> None:
    call = twilio.parse(load("twilio", "minimal"))
    assert [(t.speaker, t.text, t.start, t.end) for t in call.turns] == [
        ("agent", "Thanks for calling Acme.", 0.48, 2.1),
        ("caller", "Hi, I need to cancel.", 2.9, 4.6),
    ]
    assert call.tool_calls == []
    assert call.metadata["agent_channel"] == 1
    assert call.turns[0].extra["confidence"] == "0.97"
    assert call.call_id.startswith("twilio-")


def test_agent_channel_can_be_overridden() -> None:
    record = load("twilio", "minimal")
    assert [t.speaker for t in twilio.parse(record, agent_channel=2).turns] == ["caller", "agent"]
    other = twilio.FORMAT.with_agent_channel(2)
    assert [t.speaker for t in other.parse(record).turns] == ["caller", "agent"]
    assert other.name == "twilio"
    assert twilio.FORMAT.agent_channel == 1  # the shared default is untouched


def test_rich_page_is_ordered_and_keeps_fields() -> None:
    call = twilio.parse(load("twilio", "rich"))
    assert call.call_id == "GT123"
    assert [t.extra["sentence_index"] for t in call.turns] == [0, 1, 2, 3]
    assert call.turns[3].start == 5.8  # numbers accepted as well as numeric text
    assert call.turns[3].extra["new_field"] == "kept"
    assert call.metadata["meta"]["page_size"] == 50
    assert call.duration == 7.0
    # The caller began at 5.8 s while the agent spoke until 6.2 s: a barge-in.
    assert call.turns[2].interrupted
    assert call.turns[2].extra["interrupted_by"] == "overlapping speech"


def test_bare_list_of_sentences() -> None:
    sentences = load("twilio", "minimal")["sentences"]
    assert twilio.detect(sentences)
    call = twilio.parse(sentences)
    assert [t.speaker for t in call.turns] == ["agent", "caller"]


MALFORMED: list[tuple[list[str | int], Any, str]] = [
    (["sentences"], "hi", "sentences"),
    (["sentences", 0], 3, "sentences[0]"),
    (["sentences", 0, "media_channel"], "left", "sentences[0].media_channel"),
    (["sentences", 0, "media_channel"], None, "sentences[0].media_channel"),
    (["sentences", 0, "transcript"], 5, "sentences[0].transcript"),
    (["sentences", 1, "start_time"], "abc", "sentences[1].start_time"),
    (["sentences", 1, "end_time"], -2, "sentences[1].end_time"),
]


@pytest.mark.parametrize(("path", "value", "where"), MALFORMED)
def test_malformed_field_is_named(path: list[str | int], value: Any, where: str) -> None:
    error = error_of(twilio.parse, with_value(load("twilio", "minimal"), path, value))
    assert error.where == where


def test_channel_given_as_digits_is_accepted() -> None:
    record = with_value(load("twilio", "minimal"), ["sentences", 0, "media_channel"], "1")
    assert twilio.parse(record).turns[0].speaker == "agent"


def test_oversized_transcript_is_refused_with_the_reason() -> None:
    items = [{}] * (MAX_ITEMS + 1)
    error = error_of(twilio.parse, {"sentences": items})
    assert error.where == "sentences"
    assert "limit" in error.message


@settings(max_examples=300, deadline=None)
@given(VENDOR_VALUES)
def test_fuzz_twilio_like_json(record: object) -> None:
    parse_or_error(twilio.parse, record)
    parse_or_error(twilio.parse, {"sentences": [record]})
    parse_or_error(twilio.parse, [record])


def test_agent_label_that_is_a_number_picks_the_channel() -> None:
    record = load("twilio", "minimal")
    assert twilio.FORMAT.with_agent_label("2").parse(record).turns[0].speaker == "caller"
    assert twilio.FORMAT.with_agent_label("Maya") is twilio.FORMAT  # a name is for csv / lines
    assert twilio.FORMAT.with_agent_label(None) is twilio.FORMAT


def test_transcript_sid_is_read_from_the_page_url() -> None:
    record = load("twilio", "minimal")
    record["meta"] = {"url": "https://intelligence.twilio.com/v2/Transcripts/GT9f/Sentences"}
    assert twilio.parse(record).call_id == "GT9f"


def test_agent_label_reaches_the_format_through_detection() -> None:
    record = load("twilio", "minimal")
    chosen = Detector.for_name("auto", agent_label="2").choose(record)
    assert [t.speaker for t in chosen.parse(record).turns] == ["caller", "agent"]


def test_pages_of_one_transcript_are_one_call_in_sentence_order() -> None:
    pages = load("twilio", "pages")
    assert twilio.detect(pages)
    call = twilio.parse(list(reversed(pages)))  # pages in any order: sentences sorted
    assert call.call_id == "GT0pages"
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("agent", "Thanks for calling."),
        ("caller", "I need to move my visit."),
        ("agent", "Sure, to which day?"),
    ]
    assert [p["meta"]["page"] for p in call.metadata["pages"]] == [1, 0]


def test_a_page_fetched_twice_counts_its_sentences_once() -> None:
    pages = load("twilio", "pages")
    call = twilio.parse([*pages, pages[1]])
    assert len(call.turns) == 3


def test_a_page_of_another_transcript_is_an_error_naming_the_page() -> None:
    pages = load("twilio", "pages")
    pages[1]["meta"]["url"] = pages[1]["meta"]["url"].replace("GT0pages", "GT0other")
    error = error_of(twilio.parse, pages)
    assert error.where == "[1]"
    assert "GT0other" in error.message


def test_pages_of_several_transcripts_are_a_list_of_calls(tmp_path: Any) -> None:
    import json

    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import Store, resolve_db_url

    pages = load("twilio", "pages")
    pages[1]["meta"]["url"] = pages[1]["meta"]["url"].replace("GT0pages", "GT0other")
    assert not twilio.detect(pages)
    path = tmp_path / "two.json"
    path.write_text(json.dumps(pages))
    store = Store(resolve_db_url(str(tmp_path / "two.db")))
    try:
        summary = import_calls(store, ImportOptions((str(path),)))
        assert summary.run_id is not None
        ids = sorted(r.id for r in store.iter_conversations(summary.run_id))
    finally:
        store.close()
    assert ids == ["GT0other", "GT0pages"]


def test_a_file_of_pages_imports_as_one_call(tmp_path: Any) -> None:
    import json

    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import Store, resolve_db_url

    path = tmp_path / "pages.json"
    path.write_text(json.dumps(load("twilio", "pages")))
    store = Store(resolve_db_url(str(tmp_path / "t.db")))
    try:
        summary = import_calls(store, ImportOptions((str(path),)))
        assert summary.run_id is not None
        [stored] = list(store.iter_conversations(summary.run_id))
    finally:
        store.close()
    assert (summary.imported, summary.failed) == (1, [])
    assert [t.text for t in stored.turns][-1] == "Sure, to which day?"
