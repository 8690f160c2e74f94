"""Retell: the call object of `GET /v2/get-call/{call_id}` and the `call_ended` / `call_analyzed`
webhooks (`{"event": …, "call": {…}}`), and the pages of the v3 list endpoint
(`{"items": [call, …], "pagination_key": …, "has_more": …}`), a call per item (a bare list of
calls, the v2 list response, is a call per item too).

Turns and tools come from `transcript_with_tool_calls` (invocations joined to results by
`tool_call_id`), else from `transcript_object`. Roles: `user` is the caller, `agent` and
`transfer_target` (the party a call was transferred to) speak for the agent side. Turn times are
the first and last word times (seconds of audio); `start_timestamp` is epoch milliseconds.
A result flagged `successful: true` can still carry an error in its content: both are kept.
"""

from __future__ import annotations

from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedTurn,
    RecordError,
    check_counts,
    join_path,
    optional_seconds,
    show,
)
from polygon_voice.imports.formats._vendor import (
    SplitFormat,
    ToolJoin,
    as_object,
    flag,
    identifier,
    item_list,
    last_turn,
    mark_overlaps,
    objects,
    optional_text,
    optional_time,
    required_text,
    result_error,
    text,
    unmapped,
)

NAME = "retell"
EVENTS = ("call_ended", "call_analyzed", "call_started")
SPEAKERS = {"user": "caller", "agent": "agent", "transfer_target": "agent"}
TRANSCRIPTS = ("transcript_with_tool_calls", "transcript_object")
CALL_KEYS = ("call_status", "call_type", "transcript_object", "transcript_with_tool_calls")


def detect(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    if is_list_page(record):
        return True
    if record.get("event") in EVENTS and isinstance(record.get("call"), dict):
        return True
    return isinstance(record.get("call_id"), str) and any(key in record for key in CALL_KEYS)


def is_list_page(record: object) -> bool:
    """A page of the v3 list endpoint, `{items: [call...], pagination_key, has_more}`."""
    if not isinstance(record, dict) or not isinstance(record.get("items"), list):
        return False
    if "pagination_key" not in record and "has_more" not in record:
        return False
    items = record["items"]
    return not items or (isinstance(items[0], dict) and "call_id" in items[0])


def split(record: object) -> list[tuple[str, object]]:
    """A list page's calls, one record each (`items[3]`); any other record is itself."""
    if not is_list_page(record):
        return [("", record)]
    assert isinstance(record, dict)
    items = item_list(record["items"], "items")
    return [(join_path("items", index), item) for index, item in enumerate(items)]


def parse(record: object) -> ImportedCall:
    top = as_object(record, "(record)")
    if is_list_page(top):
        raise RecordError("items", "a page of calls: import each item as a call")
    call, base, envelope = top, "", {}
    if top.get("event") in EVENTS or ("call" in top and "call_id" not in top):
        call, base = as_object(top.get("call"), "call"), "call"
        envelope = unmapped(top, ["call"])
    call_id = identifier(call.get("call_id"), join_path(base, "call_id"))
    source = next((key for key in TRANSCRIPTS if call.get(key) is not None), None)
    history = _History(_word_times(call, base) if source == TRANSCRIPTS[0] else [])
    if source is not None:
        for where, item in objects(call[source], join_path(base, source)):
            history.add(item, where)
    mark_overlaps(history.turns)
    metadata = unmapped(call, [] if source is None else [source])
    if history.events:
        metadata["events"] = history.events
    if envelope:
        metadata["envelope"] = envelope
    return check_counts(
        ImportedCall(
            call_id=call_id,
            source_format=NAME,
            turns=history.turns,
            tool_calls=history.tools.finished(),
            started_at=optional_time(call, "start_timestamp", base),
            duration=optional_seconds(
                call.get("duration_ms"), join_path(base, "duration_ms"), "ms"
            ),
            ended_reason=optional_text(call, "disconnection_reason", base),
            metadata=metadata,
        )
    )


def _word_times(call: dict[str, Any], base: str) -> list[tuple[object, object, str]]:
    """`transcript_object`'s utterances (content, words, path), to lend word times to the
    utterances of `transcript_with_tool_calls`, whose `words` are often empty."""
    found = call.get("transcript_object")
    if not isinstance(found, list):
        return []
    where = join_path(base, "transcript_object")
    return [
        (item.get("content"), item.get("words"), join_path(join_path(where, index), "words"))
        for index, item in enumerate(found)
        if isinstance(item, dict)
    ]


class _History:
    """The transcript items walked in order into turns, tool calls and events."""

    def __init__(self, word_times: list[tuple[object, object, str]]) -> None:
        self.turns: list[ImportedTurn] = []
        self.tools = ToolJoin()
        self.events: list[dict[str, Any]] = []
        self._word_times = word_times
        self._utterances = 0

    def add(self, item: dict[str, Any], where: str) -> None:
        role = required_text(item.get("role"), join_path(where, "role"))
        if role in SPEAKERS:
            self.turns.append(self._turn(item, where, role))
        elif role == "tool_call_invocation":
            self._invocation(item, where)
        elif role == "tool_call_result":
            self._result(item, where)
        else:  # node_transition, dtmf, sms, injected and roles not known yet: kept in order
            self.events.append({"after_turn": last_turn(self.turns), **item})

    def _turn(self, item: dict[str, Any], where: str, role: str) -> ImportedTurn:
        content = text(item.get("content"), join_path(where, "content"))
        words_path = join_path(where, "words")
        words = item.get("words")
        borrowed = self._borrowed_words(content, words)
        if borrowed is not None:
            words, words_path = borrowed
        start, end = _span(words, words_path)
        extra = unmapped(item, ["role", "content"])
        if role == "transfer_target":
            extra["role"] = role  # the party the call was handed to, not the agent itself
        return ImportedTurn(
            speaker="caller" if SPEAKERS[role] == "caller" else "agent",
            text=content,
            start=start,
            end=end,
            extra=extra,
        )

    def _borrowed_words(self, content: str, words: object) -> tuple[object, str] | None:
        """The same utterance's words in `transcript_object`, when this one has none."""
        index = self._utterances
        self._utterances += 1
        if words or index >= len(self._word_times):
            return None
        other_content, other_words, other_path = self._word_times[index]
        if other_content != content or not other_words:
            return None
        return other_words, other_path

    def _invocation(self, item: dict[str, Any], where: str) -> None:
        self.tools.request_of(
            item,
            where,
            ("tool_call_id", "name", "arguments"),
            start=optional_seconds(item.get("time_sec"), join_path(where, "time_sec")),
            after_turn=last_turn(self.turns),
            extra=unmapped(item, ["role", "tool_call_id", "name", "arguments", "time_sec"]),
        )

    def _result(self, item: dict[str, Any], where: str) -> None:
        tool_call = self.tools.result_of(
            item, where, id_key="tool_call_id", name_key="name", result_key="content",
            after_turn=last_turn(self.turns),
        )  # fmt: skip
        tool_call.end = optional_seconds(item.get("time_sec"), join_path(where, "time_sec"))
        successful = item.get("successful")
        if successful is not None:
            tool_call.extra["successful"] = flag(successful, join_path(where, "successful"))
        if successful is False:
            tool_call.error = _failure_text(tool_call.result)
        else:
            tool_call.error = result_error(tool_call.result)
        kept = unmapped(item, ["role", "tool_call_id", "name", "content", "time_sec", "successful"])
        if kept:
            tool_call.extra["result_item"] = kept


def _failure_text(result: Any) -> str:
    """The text of a failed result: its error field, the text itself, or a plain note."""
    found = result_error(result)
    if found is not None:
        return found
    if isinstance(result, str) and result:
        return result
    return show(result, 500) if result is not None else "the tool call was not successful"


def _span(words: object, where: str) -> tuple[float | None, float | None]:
    """First word's start and last word's end, in seconds of audio time."""
    if words is None or words == []:
        return None, None
    entries = list(objects(words, where))
    first_where, first = entries[0]
    last_where, last = entries[-1]
    start = optional_seconds(first.get("start"), join_path(first_where, "start"))
    end = optional_seconds(last.get("end"), join_path(last_where, "end"))
    return start, end


FORMAT = SplitFormat(
    name=NAME,
    description="Retell call objects and call_ended / call_analyzed webhooks",
    detector=detect,
    parser=parse,
    splitter=split,
)
