"""Twilio Conversational Intelligence: the transcript sentences of
`GET https://intelligence.twilio.com/v2/Transcripts/{TranscriptSid}/Sentences` (the API page
`{"sentences": [...], "meta": {...}}`, a bare list of sentences, or a list of the pages of one
transcript, which is one call: its sentences joined in order).

There are no roles and no tools: the `media_channel` of each sentence says who spoke, and
Polygon maps one channel to the agent and every other channel to the caller. The default agent
channel is 1 (the channel the agent's greeting is on in Twilio's documented example); pass
another with `parse(record, agent_channel=2)` or `FORMAT.with_agent_channel(2)`.
`start_time` / `end_time` are seconds from the transcript's start (numbers or numeric text).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedTurn,
    RecordError,
    check_counts,
    expect_type,
    join_path,
    optional_seconds,
)
from polygon_voice.imports.formats._vendor import (
    ChannelFormat,
    content_id,
    identifier,
    mark_overlaps,
    objects,
    text,
    unmapped,
)

NAME = "twilio"
DEFAULT_AGENT_CHANNEL = 1
SENTENCE_KEYS = ("media_channel", "transcript")
ID_KEYS = ("transcript_sid", "TranscriptSid")
# The page's own address names the transcript: .../v2/Transcripts/GT.../Sentences
SID_IN_URL = re.compile(r"/Transcripts/(GT[0-9A-Za-z]+)")


def detect(record: object) -> bool:
    if isinstance(record, dict):
        return _is_page(record)
    if not isinstance(record, list) or not record:
        return False
    return _looks_like_sentence(record[0]) or _pages_of_one_transcript(record)


def _pages_of_one_transcript(record: list[Any]) -> bool:
    """A list of pages all of one transcript: one call. Pages of several transcripts are a
    list of calls, a record each."""
    if not all(_is_page(item) for item in record):
        return False
    sids: set[str] = set()
    for page in record:
        try:
            sid = _sid(page, list(objects(page["sentences"][:1], "sentences")))
        except RecordError:
            sid = None
        if sid is not None:
            sids.add(sid)
    return len(sids) <= 1


def _is_page(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    sentences = record.get("sentences")
    if not isinstance(sentences, list):
        return False
    return not sentences or _looks_like_sentence(sentences[0])


def _looks_like_sentence(item: object) -> bool:
    return isinstance(item, dict) and all(key in item for key in SENTENCE_KEYS)


def parse(record: object, agent_channel: int = DEFAULT_AGENT_CHANNEL) -> ImportedCall:
    if isinstance(record, list) and record and all(_is_page(item) for item in record):
        return _pages(record, agent_channel)
    page: dict[str, Any] = {}
    raw: object = record
    sentences_path = "(record)"
    if not isinstance(record, list):
        page = expect_type(record, dict, "(record)")
        sentences_path, raw = "sentences", page.get("sentences")
    sentences = list(objects(raw, sentences_path))
    metadata = unmapped(page, ["sentences"])
    return _call(_call_id(page, sentences, record), sentences, metadata, agent_channel)


def _pages(pages: list[Any], agent_channel: int) -> ImportedCall:
    """Several pages of one transcript's sentences (a list of API pages): one call, its
    sentences in order. Pages of different transcripts cannot be one call; a sentence on two
    pages (a page fetched twice) counts once."""
    sentences: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    call_id: str | None = None
    for index, page in enumerate(pages):
        where = join_path("", index)
        found = list(objects(page.get("sentences"), join_path(where, "sentences")))
        page_id = _sid(page, found)
        if call_id is None:
            call_id = page_id
        elif page_id is not None and page_id != call_id:
            raise RecordError(
                where, f"a page of transcript {page_id}, but the first page is of {call_id}"
            )
        for entry in found:
            sid = entry[1].get("sid")
            if isinstance(sid, str) and sid in seen:
                continue
            if isinstance(sid, str):
                seen.add(sid)
            sentences.append(entry)
    metadata: dict[str, Any] = {"pages": [unmapped(page, ["sentences"]) for page in pages]}
    if not pages_complete(pages):
        # Said, not refused: the pages there are still make a call worth reading.
        metadata["pages_incomplete"] = True
    return _call(call_id or content_id(NAME, pages), sentences, metadata, agent_channel)


def pages_complete(pages: list[Any]) -> bool:
    """Whether these pages hold the whole transcript: page 0 (or a page with no number and
    no previous page) is there, and the page after each page with a `next_page_url`."""
    numbers = {number for page in pages if (number := _page_number(page)) is not None}
    for page in pages:
        meta = page.get("meta") if isinstance(page, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        number = _page_number(page)
        if meta.get("next_page_url") and (number is None or number + 1 not in numbers):
            return False
        if number is None and meta.get("previous_page_url"):
            return False
        if number is not None and number > 0 and number - 1 not in numbers:
            return False
    return True


def _page_number(page: object) -> int | None:
    meta = page.get("meta") if isinstance(page, dict) else None
    number = meta.get("page") if isinstance(meta, dict) else None
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        return None
    return number


def _as_pages(record: object) -> list[Any] | None:
    """The pages of a record that is one page or a list of pages; None for anything else."""
    if _is_page(record):
        return [record]
    if isinstance(record, list) and record and all(_is_page(item) for item in record):
        return record
    return None


def group_key(record: object) -> str | None:
    """The transcript sid of a record that is only part of its transcript's pages (its
    other pages may be in another file or line): the importer holds such records back and
    joins them by this key. None for a whole transcript, or pages without a sid."""
    pages = _as_pages(record)
    if pages is None or pages_complete(pages):
        return None
    for page in pages:
        try:
            sid = _sid(page, list(objects(page["sentences"][:1], "sentences")))
        except RecordError:
            continue  # the parse will name the bad field
        if sid is not None:
            return sid
    return None


def merge(records: list[object]) -> list[Any]:
    """The pages of one transcript from several records, as one list of pages: in page
    order, a page that came twice kept once (`_pages` then drops a repeated sentence)."""
    pages: list[Any] = []
    seen: set[str] = set()
    for record in records:
        for page in _as_pages(record) or []:
            digest = json.dumps(page, sort_keys=True, default=str)
            if digest not in seen:
                seen.add(digest)
                pages.append(page)
    pages.sort(key=_page_order)  # stable: pages without a number keep their order, last
    return pages


def _page_order(page: object) -> float:
    number = _page_number(page)
    return float("inf") if number is None else number


def _call(
    call_id: str,
    sentences: list[tuple[str, dict[str, Any]]],
    metadata: dict[str, Any],
    agent_channel: int,
) -> ImportedCall:
    sentences.sort(key=_order)
    turns = [_turn(sentence, where, agent_channel) for where, sentence in sentences]
    mark_overlaps(turns)
    metadata["agent_channel"] = agent_channel
    ends = [turn.end for turn in turns if turn.end is not None]
    return check_counts(
        ImportedCall(
            call_id=call_id,
            source_format=NAME,
            turns=turns,
            duration=max(ends) if ends else None,
            metadata=metadata,
        )
    )


def _order(entry: tuple[str, dict[str, Any]]) -> tuple[float, float]:
    """Sentences in `sentence_index` order (the API's), else by start time; never raises."""
    sentence = entry[1]
    return (
        _number_or_inf(sentence.get("sentence_index")),
        _number_or_inf(sentence.get("start_time")),
    )


def _number_or_inf(value: object) -> float:
    if isinstance(value, bool):
        return float("inf")
    if isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except ValueError:
            return float("inf")
        return number if number == number else float("inf")  # NaN sorts last
    return float("inf")


def _call_id(
    page: dict[str, Any], sentences: list[tuple[str, dict[str, Any]]], record: object
) -> str:
    """The transcript's sid; else a digest of the record."""
    return _sid(page, sentences) or content_id(NAME, record)


def _sid(page: dict[str, Any], sentences: list[tuple[str, dict[str, Any]]]) -> str | None:
    """The transcript's sid: on the page, its first sentence or in the page's `meta.url`."""
    sources = [("", page)]
    if sentences:
        sources.append(sentences[0])
    for where, source in sources:
        for key in ID_KEYS:
            if source.get(key) not in (None, ""):
                return identifier(source[key], join_path(where, key))
    meta = page.get("meta")
    url = meta.get("url") if isinstance(meta, dict) else None
    found = SID_IN_URL.search(url) if isinstance(url, str) else None
    return found.group(1) if found else None


def _turn(sentence: dict[str, Any], where: str, agent_channel: int) -> ImportedTurn:
    channel = _channel(sentence.get("media_channel"), join_path(where, "media_channel"))
    return ImportedTurn(
        speaker="agent" if channel == agent_channel else "caller",
        text=text(sentence.get("transcript"), join_path(where, "transcript")),
        start=optional_seconds(sentence.get("start_time"), join_path(where, "start_time")),
        end=optional_seconds(sentence.get("end_time"), join_path(where, "end_time")),
        extra=unmapped(sentence, ["transcript", "start_time", "end_time"]),
    )


def _channel(value: object, where: str) -> int:
    """A channel number, also accepted as digits in text."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return expect_type(value, int, where)


@dataclass(frozen=True)
class TwilioFormat(ChannelFormat):
    """The channel format, and the pages of one transcript joined across records."""

    def group_key(self, record: object) -> str | None:
        return group_key(record)

    def merge(self, records: list[object]) -> object:
        return merge(records)


FORMAT = TwilioFormat(
    NAME,
    "Twilio Conversational Intelligence transcript sentences (by media channel)",
    DEFAULT_AGENT_CHANNEL,
    detect,
    parse,
)
