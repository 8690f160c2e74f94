"""Taskmaster dialogues (Taskmaster-1, -2, -3 and -4): `{conversation_id, utterances: [{index,
speaker, text, segments?, annotations?, apis?}], ...}`, one record per dialogue (a data file is
a JSON list of them).

`user` is the caller and `assistant` the agent (any case). Taskmaster-4 writes its API calls as
an utterance's `annotations`: `api_call` (the API's name) and `request` (its arguments, JSON
text) share a context `api_call_N`; `api_response` and `response` (the answer, JSON text) share
`api_response_N`. They sit on the utterance after which the call happens, and call N is joined
to response N. Taskmaster-3 writes them as `apis: [{name, args, response}]`. A request that is
not valid JSON (the corpus has a few) keeps its text in the call's extra (`request`) with empty
arguments, so the dialogue still imports. An answer `{"success": false}` or `{"error": ...}` is
a failed call. Segments (entity spans), the other annotations and every other field are kept:
labels, never used to judge. The rating files (`reward/*.json`: a context and a candidate reply)
are not calls and are not recognised.
"""

from __future__ import annotations

import json
import re
from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
    Speaker,
    check_counts,
    join_path,
    json_args,
    show,
)
from polygon_voice.imports.formats._vendor import (
    RecordFormat,
    ToolJoin,
    as_object,
    identifier,
    objects,
    required_text,
    result_error,
    speaker_of,
    text,
    unmapped,
)

NAME = "taskmaster"
SPEAKERS: dict[str, Speaker] = {"user": "caller", "assistant": "agent"}
API_NAMES = frozenset({"api_call", "request", "api_response", "response"})
CONTEXT = re.compile(r"api_(call|response)_(\w+)")


def detect(record: object) -> bool:
    if not isinstance(record, dict) or "conversation_id" not in record:
        return False
    utterances = record.get("utterances")
    if not isinstance(utterances, list):
        return False
    first = utterances[0] if utterances else {}
    return not utterances or (isinstance(first, dict) and "speaker" in first and "text" in first)


def parse(record: object) -> ImportedCall:
    dialogue = as_object(record, "(record)")
    call_id = identifier(dialogue.get("conversation_id"), "conversation_id")
    turns: list[ImportedTurn] = []
    tools = ToolJoin()
    for where, utterance in objects(dialogue.get("utterances"), "utterances"):
        turns.append(_turn(utterance, where))
        after = len(turns) - 1
        for tool_call in _annotated_calls(utterance.get("annotations"), where, after):
            tools.call(tool_call, where)
        for tool_call in _api_list(utterance.get("apis"), where, after):
            tools.call(tool_call, where)
    return check_counts(
        ImportedCall(
            call_id=call_id,
            source_format=NAME,
            turns=turns,
            tool_calls=tools.finished(),
            metadata=unmapped(dialogue, ["conversation_id", "utterances"]),
        )
    )


def _turn(utterance: dict[str, Any], where: str) -> ImportedTurn:
    speaker_where = join_path(where, "speaker")
    name = required_text(utterance.get("speaker"), speaker_where).lower()
    speaker = speaker_of(name, SPEAKERS, speaker_where)
    extra = unmapped(utterance, ["speaker", "text", "annotations", "apis"])
    others = _other_annotations(utterance.get("annotations"))
    if others:
        extra["annotations"] = others
    return ImportedTurn(
        speaker=speaker,
        text=text(utterance.get("text"), join_path(where, "text")),
        extra=extra,
    )


def _other_annotations(raw: object) -> list[Any]:
    if not isinstance(raw, list):
        return []
    return [a for a in raw if not (isinstance(a, dict) and _is_api(a.get("name")))]


def _is_api(name: object) -> bool:
    return isinstance(name, str) and name in API_NAMES


class _Pending:
    """One API call being assembled from its annotations."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.tool = ""
        self.request: object = None
        self.answered_by = ""
        self.response: object = None
        self.answered = False


def _annotated_calls(raw: object, where: str, after_turn: int) -> list[ImportedToolCall]:
    """Taskmaster-4's `annotations`, grouped by context into calls joined to their answers."""
    if raw is None:
        return []
    pending: dict[str, _Pending] = {}
    base = join_path(where, "annotations")
    for item_where, annotation in objects(raw, base):
        name = annotation.get("name")
        if not _is_api(name):
            continue
        context = required_text(annotation.get("context"), join_path(item_where, "context"))
        found = CONTEXT.fullmatch(context)
        if found is None:
            raise RecordError(
                join_path(item_where, "context"),
                f"expected api_call_N or api_response_N, got {show(context)}",
            )
        value = text(annotation.get("value"), join_path(item_where, "value"))
        entry = pending.setdefault(found.group(2), _Pending(found.group(2)))
        _note(entry, str(name), value)
    return [_call(entry, base, after_turn) for entry in pending.values()]


def _note(entry: _Pending, name: str, value: str) -> None:
    if name == "api_call":
        entry.tool = value
    elif name == "request":
        entry.request = value
    elif name == "api_response":
        entry.answered_by = value
        entry.answered = True
    else:
        entry.response = value
        entry.answered = True


def _call(entry: _Pending, base: str, after_turn: int) -> ImportedToolCall:
    extra: dict[str, Any] = {}
    tool = entry.tool or entry.answered_by
    if not tool:
        raise RecordError(base, f"API call {entry.key} has no api_call name")
    if entry.answered_by and entry.answered_by != tool:
        extra["api_response"] = entry.answered_by
    args = _request(entry.request, extra)
    result = _answer(entry.response) if entry.answered else None
    return ImportedToolCall(
        call_id=f"api_call_{entry.key}@{after_turn}",
        tool=tool,
        args=args,
        result=result,
        error=_failure(result) if entry.answered else None,
        after_turn=after_turn,
        extra=extra,
    )


def _request(raw: object, extra: dict[str, Any]) -> dict[str, Any]:
    """The request's arguments; text that is not a JSON object is kept in `extra`."""
    if raw is None or raw == "":
        return {}
    try:
        return json_args(raw, "request")
    except RecordError:
        extra["request"] = raw
        return {}


def _answer(raw: object) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


def _failure(result: Any) -> str | None:
    if isinstance(result, dict) and result.get("success") is False:
        return show(result, 500)
    return result_error(result)


def _api_list(raw: object, where: str, after_turn: int) -> list[ImportedToolCall]:
    """Taskmaster-3's `apis: [{name, index, args, response}]`."""
    if raw is None:
        return []
    calls = []
    for n, (item_where, api) in enumerate(objects(raw, join_path(where, "apis"))):
        name = required_text(api.get("name"), join_path(item_where, "name"))
        result = api.get("response")
        calls.append(
            ImportedToolCall(
                call_id=f"api-{after_turn}-{n}",
                tool=name or "unknown",
                args=json_args(api.get("args"), join_path(item_where, "args")),
                result=result,
                error=_failure(result),
                after_turn=after_turn,
                extra=unmapped(api, ["name", "args", "response"]),
            )
        )
    return calls


FORMAT = RecordFormat(
    name=NAME,
    description="Taskmaster dialogues, their API calls as tool calls",
    detector=detect,
    parser=parse,
)
