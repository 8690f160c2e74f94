"""Small pieces shared by the parsers of vendor call logs (Vapi, Retell, LiveKit, ElevenLabs,
Twilio, Deepgram) and of the research corpora (SGD, Taskmaster, ABCD): checked access to list
items, unmapped fields kept, tool calls joined to their results, barge-in inferred from
overlapping speech, and the format objects built from a module's `detect` and `parse`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self

from polygon_voice.imports.base import (
    MAX_TOOL_CALLS,
    MAX_TURNS,
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
    Speaker,
    expect_type,
    join_path,
    json_args,
    json_result,
    loads,
    show,
    timestamp,
)

# A list of turns and tool events longer than this is refused before it is walked.
MAX_ITEMS = MAX_TURNS + 2 * MAX_TOOL_CALLS

# Speech that starts this long before the other side stopped counts as a barge-in, not jitter.
OVERLAP_SECONDS = 0.05


def as_object(value: object, where: str) -> dict[str, Any]:
    """`value` as a JSON object, else a RecordError naming `where`."""
    return expect_type(value, dict, where)


def item_list(value: object, where: str) -> list[Any]:
    """A list of transcript items, refused when it is longer than any real call."""
    items = expect_type(value, list, where)
    if len(items) > MAX_ITEMS:
        raise RecordError(where, f"{len(items)} items; the limit is {MAX_ITEMS}")
    return items


def objects(value: object, where: str) -> Iterable[tuple[str, dict[str, Any]]]:
    """Each item of a list of objects with its path (`where[3]`); a non-object item is an error."""
    for index, item in enumerate(item_list(value, where)):
        path = f"{where}[{index}]"  # join_path of an index
        yield path, item if type(item) is dict else as_object(item, path)


def text(value: object, where: str) -> str:
    """Spoken text: a string, or empty when absent or null."""
    if value is None:
        return ""
    return expect_type(value, str, where)


def optional_text(obj: Mapping[str, Any], key: str, base: str) -> str | None:
    """The text field `key` of `obj` (found at `base`), None when absent or null."""
    value = obj.get(key)
    return None if value is None else text(value, join_path(base, key))


def optional_time(obj: Mapping[str, Any], key: str, base: str) -> datetime | None:
    """The time field `key` of `obj` (ISO 8601, epoch seconds or milliseconds), None when
    absent or null."""
    value = obj.get(key)
    return None if value is None else timestamp(value, join_path(base, key))


def required_text(value: object, where: str) -> str:
    """A string the record must carry (a role, a type): missing or null is an error."""
    if value is None:
        raise RecordError(where, "missing")
    return expect_type(value, str, where)


def identifier(value: object, where: str) -> str:
    """An id given as a string or an integer; anything else (or nothing) is an error."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        raise RecordError(where, "missing")
    ident = expect_type(value, str, where)
    if not ident:
        raise RecordError(where, "expected a non-empty id, got an empty string")
    return ident


def flag(value: object, where: str) -> bool:
    """A boolean, False when absent."""
    if value is None:
        return False
    return expect_type(value, bool, where)


def speaker_of(name: str, speakers: Mapping[str, Speaker], where: str) -> Speaker:
    """The side a source's speaker name stands for; a name the source never uses is an error."""
    if name not in speakers:
        raise RecordError(where, f"expected {' or '.join(speakers)}, got {show(name)}")
    return speakers[name]


def unmapped(obj: Mapping[str, Any], mapped: Iterable[str]) -> dict[str, Any]:
    """The fields of `obj` the parser did not map, kept as they are (in their order)."""
    # A copy less the mapped keys: a parser keeps the rest of every message, and copying in
    # C then dropping the few mapped keys costs half of testing each field in a comprehension.
    kept = dict(obj)
    for key in mapped:
        kept.pop(key, None)
    return kept


def content_id(prefix: str, record: object) -> str:
    """A stable id for a record that carries none: a digest of its content."""
    try:
        data = json.dumps(record, sort_keys=True, default=str).encode()
    except (TypeError, ValueError, RecursionError):
        data = show(record, 10_000).encode()
    return f"{prefix}-{hashlib.sha256(data).hexdigest()[:16]}"


def last_turn(turns: list[ImportedTurn]) -> int | None:
    """The index of the latest turn, the one a tool call made now comes after."""
    return len(turns) - 1 if turns else None


def result_error(result: Any) -> str | None:
    """The failure a tool reported inside a result that its flag called a success.

    Some systems (Retell) mark a call successful when it returned at all, even when the answer
    is `{"error": "..."}`: the content is what counts.
    """
    if isinstance(result, dict):
        error = result.get("error")
        if error not in (None, "", False):
            return error if isinstance(error, str) else show(error, 500)
    return None


class ToolJoin:
    """Tool calls in the order they were made, each joined to its result by the call's id."""

    def __init__(self) -> None:
        self.calls: list[ImportedToolCall] = []
        self._by_id: dict[str, ImportedToolCall] = {}

    def call(self, tool_call: ImportedToolCall, where: str) -> None:
        if len(self.calls) >= MAX_TOOL_CALLS:
            raise RecordError(where, f"more than {MAX_TOOL_CALLS} tool calls")
        self.calls.append(tool_call)
        self._by_id.setdefault(tool_call.call_id, tool_call)

    def result(
        self,
        call_id: str,
        tool: str,
        raw_result: object,
        where: str,
        *,
        after_turn: int | None,
    ) -> ImportedToolCall:
        """The call with this id, given its result; a result with no call becomes a call of its
        own (marked `orphan_result`), so nothing the tool said is lost."""
        tool_call = self._by_id.get(call_id)
        if tool_call is None or tool_call.extra.get("has_result"):
            tool_call = ImportedToolCall(call_id=call_id, tool=tool, args={}, after_turn=after_turn)
            tool_call.extra["orphan_result"] = True
            self.call(tool_call, where)
        tool_call.result = json_result(raw_result)
        tool_call.extra["has_result"] = True
        return tool_call

    def request_of(
        self,
        item: dict[str, Any],
        where: str,
        keys: tuple[str, str, str],
        *,
        start: float | None,
        after_turn: int | None,
        extra: dict[str, Any],
    ) -> None:
        """`call` for a source item that holds the call's id, tool and arguments under `keys`."""
        call_id, tool, args = tool_request(item, where, keys)
        tool_call = ImportedToolCall(
            call_id=call_id, tool=tool, args=args, start=start, after_turn=after_turn, extra=extra
        )
        self.call(tool_call, where)

    def result_of(
        self,
        item: dict[str, Any],
        where: str,
        *,
        id_key: str,
        name_key: str,
        result_key: str,
        after_turn: int | None,
    ) -> ImportedToolCall:
        """`result` for a source item that names the call's id, the tool and the result under
        these keys (a missing tool name is `unknown`: the id is what joins the result)."""
        call_id, tool = item.get(id_key), item.get(name_key)
        # Plain values are taken as they are; a field's path is made only to name an error.
        if type(call_id) is not str or not call_id:
            call_id = identifier(call_id, join_path(where, id_key))
        if type(tool) is not str:
            tool = text(tool, join_path(where, name_key))
        return self.result(
            call_id, tool or "unknown", item.get(result_key), where, after_turn=after_turn
        )

    def finished(self) -> list[ImportedToolCall]:
        for tool_call in self.calls:
            tool_call.extra.pop("has_result", None)
        return self.calls


def tool_request(
    item: dict[str, Any], where: str, keys: tuple[str, str, str]
) -> tuple[str, str, dict[str, Any]]:
    """A tool call's (id, tool, arguments), read from `item` under `keys` (id, name, arguments),
    each error naming its field."""
    id_key, name_key, args_key = keys
    call_id = identifier(item.get(id_key), join_path(where, id_key))
    return (call_id, *named_arguments(item, where, name_key, args_key))


def named_arguments(
    item: dict[str, Any], where: str, name_key: str, args_key: str
) -> tuple[str, dict[str, Any]]:
    """A tool call's (tool, arguments), for a source that nests them apart from the call's id
    (Vapi's `function`). A plain name and arguments (a dict, or JSON text of one) are read
    without putting a field's path together: that is done only to name an error."""
    name = item.get(name_key)
    if type(name) is not str or not name:
        name = identifier(name, join_path(where, name_key))
    args = item.get(args_key)
    if type(args) is dict:
        return name, args
    if type(args) is str and args:
        try:
            parsed = loads(args)
        except (ValueError, RecursionError):
            parsed = None  # json_args names the field and says why
        if type(parsed) is dict:
            return name, parsed
    return name, json_args(args, join_path(where, args_key))


def mark_overlaps(turns: list[ImportedTurn]) -> None:
    """A turn the other side started talking over is interrupted (barge-in).

    Used for sources with per-turn times but no interruption marker; the inference is noted in
    the turn's `extra` so it can be told from a marker the source set itself.
    """
    for current, following in itertools.pairwise(turns):
        if current.interrupted or current.speaker == following.speaker:
            continue
        if current.end is None or following.start is None:
            continue
        if following.start < current.end - OVERLAP_SECONDS:
            current.interrupted = True
            current.extra["interrupted_by"] = "overlapping speech"


@dataclass(frozen=True)
class RecordFormat:
    """A format that is a module's `detect` and `parse` functions, one call per record."""

    name: str
    description: str
    detector: Callable[[object], bool]
    parser: Callable[[object], ImportedCall]

    def detect(self, record: object) -> bool:
        return self.detector(record)

    def parse(self, record: object) -> ImportedCall:
        return self.parser(record)


@dataclass(frozen=True)
class SplitFormat(RecordFormat):
    """A format one of whose records can hold many calls (a list page, a corpus file): the
    import asks `split` for the parts and parses each as a record of its own."""

    splitter: Callable[[object], list[tuple[str, object]]]

    def split(self, record: object) -> list[tuple[str, object]]:
        return self.splitter(record)


@dataclass(frozen=True)
class ChannelFormat:
    """A format whose records tell the two sides apart only by a channel or speaker number
    (Twilio, Deepgram): which number is the agent's is a setting, `--agent-label N`."""

    name: str
    description: str
    agent_channel: int
    detector: Callable[[object], bool]
    parser: Callable[[object, int], ImportedCall]

    def detect(self, record: object) -> bool:
        return self.detector(record)

    def parse(self, record: object) -> ImportedCall:
        return self.parser(record, self.agent_channel)

    def with_agent_channel(self, channel: int) -> Self:
        """The same format with another channel (or speaker) number taken as the agent's."""
        return dataclasses.replace(self, agent_channel=channel)

    def with_agent_label(self, label: str | None) -> Self:
        """`--agent-label N`: a number names the agent's channel; any other label is for the
        formats that name speakers (csv, lines), so this format stays as it is."""
        try:
            return self.with_agent_channel(int((label or "").strip()))
        except ValueError:
            return self
