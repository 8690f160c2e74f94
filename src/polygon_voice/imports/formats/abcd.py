"""ABCD (Action-Based Conversations Dataset) chats: `{convo_id, scenario: {personal, order,
product, flow, subflow}, original: [[speaker, text]], delexed: [{speaker, text, turn_count,
targets, candidates}]}`, one record per chat: a JSON list of chats, or the corpus file as
published (`{"train": [...], "dev": [...], "test": [...]}`), a call per chat.

`agent` is the agent and `customer` the caller. An `action` line is what the agent did in its
tools ("Account has been pulled up for crystal minh."): a tool call made after the turn before
it. Its name and values come from the chat's own labels, the `delexed` line's `targets`
(`[subflow, "take_action", action name, values, ...]`); without them the text is matched to the
action messages the ABCD agent tool shows; a text matching none is the tool `unknown-action`.
The line's text is kept in the call's extra (`text`), and its values are the call's arguments
(`values`, in the order the dataset gives them). `flow` and `subflow` (the customer's intent) are
kept as metadata with the rest of the `scenario`; they are labels, never used to judge.
"""

from __future__ import annotations

import re
from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
    Speaker,
    check_counts,
    expect_type,
    join_path,
    show,
)
from polygon_voice.imports.formats._vendor import (
    SplitFormat,
    ToolJoin,
    as_object,
    identifier,
    item_list,
    last_turn,
    unmapped,
)

NAME = "abcd"
SPEAKERS: dict[str, Speaker] = {"agent": "agent", "customer": "caller"}
ACTION = "action"
SPLITS = ("train", "dev", "test")
UNKNOWN_ACTION = "unknown-action"
# The action messages of ABCD's agent tool, for chats that carry no `delexed` labels.
ACTION_TEXTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), name)
    for pattern, name in (
        (r"account has been pulled up for (.+?)\.?", "pull-up-account"),
        (r"purchase validation in progress.*", "validate-purchase"),
        (r"identity verification in progress.*", "verify-identity"),
        (r"details of (.+?) have been entered\.?", "enter-details"),
        (r"the (.+?) has been notified\.?", "notify-team"),
        (r"searching the faq pages.*", "search-faq"),
        (r"system action: search (\w+)", "search-{0}"),
        (r"faq answer related to (\w+) \(question(\d+)\) was selected\.?", "select-faq"),
    )
)


def detect(record: object) -> bool:
    return _is_chat(record) or _is_corpus(record)


def _is_chat(record: object) -> bool:
    return (
        isinstance(record, dict)
        and "convo_id" in record
        and isinstance(record.get("original"), list)
    )


def _is_corpus(record: object) -> bool:
    """The corpus file as published, `{"train": [chat...], "dev": [...], "test": [...]}`."""
    if not isinstance(record, dict) or not record or not set(record) <= set(SPLITS):
        return False
    lists = [value for value in record.values() if isinstance(value, list)]
    return (
        len(lists) == len(record)
        and any(lists)
        and all(not value or _is_chat(value[0]) for value in lists)
    )


def split(record: object) -> list[tuple[str, object]]:
    """The corpus file's chats, one record each (`train[12]`); a chat is itself."""
    if not _is_corpus(record):
        return [("", record)]
    assert isinstance(record, dict)
    return [
        (join_path(name, index), chat)
        for name, chats in record.items()
        for index, chat in enumerate(chats)
    ]


def parse(record: object) -> ImportedCall:
    if _is_corpus(record):
        raise RecordError("", "the whole corpus: import each chat of its splits as a call")
    chat = as_object(record, "(record)")
    convo_id = identifier(chat.get("convo_id"), "convo_id")
    lines = item_list(chat.get("original"), "original")
    labels = _labels(chat.get("delexed"), len(lines))
    turns: list[ImportedTurn] = []
    tools = ToolJoin()
    for index, line in enumerate(lines):
        where = join_path("original", index)
        speaker, said = _line(line, where)
        label = labels[index] if labels else None
        if speaker == ACTION:
            tools.call(_action(said, label, where, last_turn(turns)), where)
            continue
        extra = {"delexed": unmapped(label, ["speaker"])} if label is not None else {}
        turns.append(ImportedTurn(speaker=SPEAKERS[speaker], text=said, extra=extra))
    return check_counts(
        ImportedCall(
            call_id=f"abcd-{convo_id}",
            source_format=NAME,
            turns=turns,
            tool_calls=tools.finished(),
            metadata=_metadata(chat, matched=labels is not None),
        )
    )


def _line(line: object, where: str) -> tuple[str, str]:
    """`[speaker, text]`, the speaker one of agent, customer or action."""
    pair = expect_type(line, list, where)
    if len(pair) != 2:
        raise RecordError(where, f"expected [speaker, text], got {show(pair)}")
    speaker = expect_type(pair[0], str, join_path(where, 0))
    if speaker not in SPEAKERS and speaker != ACTION:
        raise RecordError(
            join_path(where, 0), f"expected agent, customer or action, got {show(speaker)}"
        )
    return speaker, expect_type(pair[1], str, join_path(where, 1))


def _labels(raw: object, count: int) -> list[dict[str, Any]] | None:
    """The `delexed` lines, when there is one for each original line (else they cannot be
    matched line by line, and are left in the metadata)."""
    if not isinstance(raw, list) or len(raw) != count:
        return None
    if not all(isinstance(item, dict) for item in raw):
        return None
    return raw


def _action(
    said: str, label: dict[str, Any] | None, where: str, after_turn: int | None
) -> ImportedToolCall:
    labelled = _labelled_action(label)
    name, values = labelled if labelled is not None else _text_action(said)
    extra: dict[str, Any] = {"text": said}
    if label is not None:
        extra["delexed"] = unmapped(label, ["speaker"])
    return ImportedToolCall(
        call_id=where,
        tool=name,
        args={"values": values},
        after_turn=after_turn,
        extra=extra,
    )


def _labelled_action(label: dict[str, Any] | None) -> tuple[str, list[Any]] | None:
    """`targets[2]` (the action's name) and `targets[3]` (its values), when well formed."""
    targets = label.get("targets") if label is not None else None
    if not isinstance(targets, list) or len(targets) < 4:
        return None
    name, values = targets[2], targets[3]
    if not isinstance(name, str) or not name or not isinstance(values, list):
        return None
    return name, values


def _text_action(said: str) -> tuple[str, list[Any]]:
    stripped = said.strip()
    for pattern, name in ACTION_TEXTS:
        found = pattern.fullmatch(stripped)
        if found is None:
            continue
        groups = [group.lower() for group in found.groups()]
        if "{0}" in name:
            return name.format(*groups), []
        if name == "select-faq":
            return name, [f"{groups[0]}_{groups[1]}"]
        return name, groups
    return UNKNOWN_ACTION, []


def _metadata(chat: dict[str, Any], *, matched: bool) -> dict[str, Any]:
    """The chat's fields but its lines; `delexed` too when it was not matched line by line."""
    metadata = unmapped(
        chat, ["convo_id", "original", "delexed"] if matched else ["convo_id", "original"]
    )
    scenario = chat.get("scenario")
    if isinstance(scenario, dict):
        for key in ("flow", "subflow"):
            if key in scenario:
                metadata[key] = scenario[key]
    return metadata


FORMAT = SplitFormat(
    name=NAME,
    description="ABCD customer-service chats, agent actions as tool calls",
    detector=detect,
    parser=parse,
    splitter=split,
)
