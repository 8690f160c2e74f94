"""The parser helpers: a field path and the expected type in every error."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from polygon_voice.imports import ImportedCall, ImportedTurn, RecordError
from polygon_voice.imports.base import (
    check_counts,
    get,
    json_args,
    json_result,
    optional,
    seconds,
    timestamp,
)

RECORD = {"artifact": {"messages": [{"secondsFromStart": "abc"}], "n": True}}


def test_get_walks_a_path_and_checks_the_type() -> None:
    assert get(RECORD, "artifact.messages", list) == [{"secondsFromStart": "abc"}]
    assert optional(RECORD, "artifact.missing", str) is None
    assert get(RECORD, "artifact.missing", str, "x") == "x"


@pytest.mark.parametrize(
    ("path", "kind", "where", "message"),
    [
        ("artifact.missing", str, "artifact.missing", "missing"),
        ("artifact.messages", dict, "artifact.messages", "expected an object"),
        ("artifact.n", int, "artifact.n", "expected an integer, got true"),
        ("artifact.n", float, "artifact.n", "expected a number"),
        ("artifact.messages.x", str, "artifact.messages", "expected an object"),
    ],
)
def test_get_errors_name_the_path(path: str, kind: type, where: str, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        get(RECORD, path, kind)
    assert caught.value.where == where
    assert message in caught.value.message
    assert str(caught.value).startswith(where)


def test_seconds() -> None:
    assert seconds(1500, "t", unit="ms") == 1.5
    assert seconds("2.5", "t") == 2.5
    with pytest.raises(RecordError, match='expected a number, got "abc"'):
        seconds("abc", "messages[3].secondsFromStart")
    bad: object
    for bad in (True, None, [], float("nan"), float("inf"), -1):
        with pytest.raises(RecordError):
            seconds(bad, "t")


def test_json_args_and_results() -> None:
    assert json_args('{"a": 1}', "args") == {"a": 1}
    assert json_args({"a": 1}, "args") == {"a": 1}
    assert json_args(None, "args") == {}
    assert json_args("", "args") == {}
    for bad in ("[1]", "{oops", 3):
        with pytest.raises(RecordError):
            json_args(bad, "args")
    assert json_result('{"ok": true}') == {"ok": True}
    assert json_result("plain text") == "plain text"
    assert json_result("{broken") == "{broken"


def test_timestamps() -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert timestamp("2026-01-02T03:04:05Z", "t") == moment
    assert timestamp(moment.timestamp(), "t") == moment
    assert timestamp(moment.timestamp() * 1000, "t") == moment
    for bad in ("yesterday", None, True, -5):
        with pytest.raises(RecordError):
            timestamp(bad, "t")


def test_a_call_with_too_many_turns_is_refused() -> None:
    turns = [ImportedTurn("agent", "x")] * 10_001
    with pytest.raises(RecordError, match="limit is 10000"):
        check_counts(ImportedCall("c", "test", turns))
