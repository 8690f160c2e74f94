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


# --- pages of one transcript spread over records (files, JSONL lines) ------------------------


def _import_files(tmp_path: Any, files: dict[str, str]) -> tuple[Any, list[Any]]:
    """Write `files`, import them all in one import; the summary and the stored calls."""
    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import Store, resolve_db_url

    paths = []
    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
        paths.append(str(tmp_path / name))
    store = Store(resolve_db_url(str(tmp_path / "pages.db")))
    try:
        summary = import_calls(store, ImportOptions(tuple(paths)))
        calls = list(store.iter_conversations(summary.run_id)) if summary.run_id else []
    finally:
        store.close()
    return summary, calls


def _page(pages: list[Any], index: int) -> str:
    import json

    return json.dumps(pages[index])


def _texts(call: Any) -> list[str]:
    return [turn.text for turn in call.turns]


WHOLE = ["Thanks for calling.", "I need to move my visit.", "Sure, to which day?"]


def test_pages_in_two_files_are_one_call(tmp_path: Any) -> None:
    pages = load("twilio", "pages")
    summary, [call] = _import_files(
        tmp_path, {"p0.json": _page(pages, 0), "p1.json": _page(pages, 1)}
    )
    assert (summary.imported, summary.failed, summary.records) == (1, [], 2)
    assert call.id == "GT0pages"
    assert _texts(call) == WHOLE


def test_pages_on_jsonl_lines_out_of_order_are_one_call_in_order(tmp_path: Any) -> None:
    pages = load("twilio", "pages")
    lines = "\n".join([_page(pages, 1), _page(pages, 0)]) + "\n"
    summary, [call] = _import_files(tmp_path, {"pages.jsonl": lines})
    assert (summary.imported, summary.failed) == (1, [])
    assert _texts(call) == WHOLE
    meta = call.trace[0].data["metadata"]
    assert [page["meta"]["page"] for page in meta["pages"]] == [0, 1]  # joined in page order
    assert "pages_incomplete" not in meta


def test_a_page_saved_twice_counts_once(tmp_path: Any) -> None:
    pages = load("twilio", "pages")
    lines = "\n".join([_page(pages, 0), _page(pages, 1), _page(pages, 0)]) + "\n"
    summary, [call] = _import_files(tmp_path, {"a.jsonl": lines, "again.json": _page(pages, 1)})
    assert (summary.imported, summary.failed) == (1, [])
    assert _texts(call) == WHOLE
    assert len(call.trace[0].data["metadata"]["pages"]) == 2


def test_a_page_of_another_transcript_is_another_call(tmp_path: Any) -> None:
    import json

    pages = load("twilio", "pages")
    other = json.loads(_page(pages, 1))
    other["meta"]["url"] = other["meta"]["url"].replace("GT0pages", "GT0other")
    other["sentences"][0]["transcript"] = "Another call's last line."
    lines = "\n".join([_page(pages, 0), json.dumps(other), _page(pages, 1)]) + "\n"
    summary, calls = _import_files(tmp_path, {"mixed.jsonl": lines})
    assert (summary.imported, summary.failed) == (2, [])
    by_id = {call.id: call for call in calls}
    assert _texts(by_id["GT0pages"]) == WHOLE
    assert _texts(by_id["GT0other"]) == ["Another call's last line."]
    assert by_id["GT0other"].trace[0].data["metadata"]["pages_incomplete"] is True  # no page 0


def test_a_whole_one_page_transcript_streams_and_a_second_copy_is_refused(tmp_path: Any) -> None:
    import json

    record = load("twilio", "minimal")
    record["meta"] = {"page": 0, "next_page_url": None, "url": "/v2/Transcripts/GT1/Sentences"}
    assert twilio.group_key(record) is None  # complete: not held back
    line = json.dumps(record)
    summary, [call] = _import_files(tmp_path, {"one.jsonl": f"{line}\n{line}\n"})
    assert call.id == "GT1"
    [failure] = summary.failed
    assert "imported twice" in failure.message


def test_held_back_pages_are_bounded(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from polygon_voice.imports import run

    monkeypatch.setattr(run, "MAX_HELD_RECORDS", 2)
    pages = load("twilio", "pages")
    lines = []
    for number in range(3):  # page 0 of three transcripts, each saying a next page follows
        page = json.loads(_page(pages, 0))
        page["meta"]["url"] = page["meta"]["url"].replace("GT0pages", f"GT0t{number}")
        lines.append(json.dumps(page))
    summary, calls = _import_files(tmp_path, {"many.jsonl": "\n".join(lines) + "\n"})
    assert sorted(call.id for call in calls) == ["GT0t0", "GT0t1"]
    [failure] = summary.failed
    assert "more than 2 records" in failure.message
    assert failure.source.endswith("many.jsonl:3")


def test_group_key_only_for_a_part_of_a_transcript() -> None:
    pages = load("twilio", "pages")
    assert twilio.group_key(pages[0]) == "GT0pages"  # a next page follows
    assert twilio.group_key(pages[1]) == "GT0pages"  # page 1 without page 0
    assert twilio.group_key(pages) is None  # the whole transcript in one list
    assert twilio.group_key(pages[:1]) == "GT0pages"
    assert twilio.group_key({"sentences": "nope"}) is None
    assert twilio.group_key([1, 2]) is None
    assert [p["meta"]["page"] for p in twilio.merge([pages[1], pages[0], [pages[1]]])] == [0, 1]


@settings(max_examples=300, deadline=None)
@given(VENDOR_VALUES, VENDOR_VALUES)
def test_fuzz_grouping_never_raises(first: object, second: object) -> None:
    page = {"sentences": [{"media_channel": 1, "transcript": "hi"}], "meta": first}
    for record in (first, page, [page, second]):
        key = twilio.group_key(record)
        assert key is None or isinstance(key, str)
    merged = twilio.merge([first, page, second, page])
    assert merged.count(page) == 1  # a page that came twice is kept once
    parse_or_error(twilio.parse, merged)
