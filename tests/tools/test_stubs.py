"""Fixed, template and rules stubs (TOOL-1)."""

from __future__ import annotations

from typing import Any

import pytest

from polygon_voice.model import CallStatus, ToolError, ToolErrorKind, ToolResult
from polygon_voice.tools import render
from polygon_voice.tools.templates import UnknownPlaceholderError
from tests.tools.helpers import drain, runtime, send, spec


def answer(stub: dict[str, Any], args: dict[str, Any]) -> Any:
    rt = runtime({"t": spec(stub)})
    send(rt, "t", args)
    [(at, event)] = drain(rt)
    assert at == 1.0
    assert isinstance(event, ToolResult)
    return event.result


def test_fixed_returns_its_answer_as_a_fresh_copy() -> None:
    tool = spec({"kind": "fixed", "returns": {"slots": ["09:00", "10:00"]}})
    rt = runtime({"t": tool})
    send(rt, "t", call_id="a")
    [(_, first)] = drain(rt)
    assert isinstance(first, ToolResult)
    first.result["slots"].append("11:00")
    send(rt, "t", call_id="b", at=5.0)
    [(_, second)] = drain(rt)
    assert isinstance(second, ToolResult)
    assert second.result == {"slots": ["09:00", "10:00"]}
    assert rt.calls[0].result == {"slots": ["09:00", "10:00"]}


def test_template_fills_placeholders_inside_text() -> None:
    stub = {"kind": "template", "returns": {"text": "Booked {name} for {people} on {day}."}}
    result = answer(stub, {"name": "Ana", "people": 3, "day": "Friday"})
    assert result == {"text": "Booked Ana for 3 on Friday."}


def test_template_whole_placeholder_keeps_the_argument_type() -> None:
    stub = {
        "kind": "template",
        "returns": {"count": "{n}", "ok": "{flag}", "items": ["{list}", "x{n}"], "none": "{nil}"},
    }
    result = answer(stub, {"n": 3, "flag": True, "list": [1, 2], "nil": None})
    assert result == {"count": 3, "ok": True, "items": [[1, 2], "x3"], "none": None}


def test_template_renders_non_text_arguments_inside_text_as_json() -> None:
    result = answer(
        {"kind": "template", "returns": "{flag}/{nil}/{list}"},
        {"flag": False, "nil": None, "list": ["a", 1]},
    )
    assert result == 'false/null/["a", 1]'


def test_template_leaves_other_braces_and_dict_keys_alone() -> None:
    result = answer({"kind": "template", "returns": {"{x}": "{ x } {1} {x}"}}, {"x": "v"})
    assert result == {"{x}": "{ x } {1} v"}


def test_template_with_unknown_placeholder_fails_naming_it() -> None:
    rt = runtime({"t": spec({"kind": "template", "returns": {"a": "hi {who}"}})})
    call = send(rt, "t", {"name": "Ana"})
    [(at, event)] = drain(rt)
    assert at == 1.0
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.INVALID_ARGUMENTS
    assert "{who}" in event.message
    assert call.status is CallStatus.FAILED
    assert call.error is ToolErrorKind.INVALID_ARGUMENTS


def test_render_copies_the_argument_value() -> None:
    args = {"items": [1, 2]}
    rendered = render({"x": "{items}"}, args)
    rendered["x"].append(3)
    assert args == {"items": [1, 2]}


def test_render_raises_for_an_unknown_placeholder() -> None:
    with pytest.raises(UnknownPlaceholderError) as info:
        render(["ok", {"deep": "{missing}"}], {})
    assert info.value.name == "missing"


RULES = {
    "kind": "rules",
    "rules": [
        {"when": {"city": "Zagreb", "vip": True}, "returns": {"slot": "vip-{city}"}},
        {"when": {"city": "Zagreb"}, "returns": {"slot": "09:00 in {city}"}},
        {"when": {"people": 1}, "returns": "solo"},
    ],
    "default": {"slot": None, "asked": "{city}"},
}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"city": "Zagreb", "vip": True}, {"slot": "vip-Zagreb"}),
        ({"city": "Zagreb", "vip": False}, {"slot": "09:00 in Zagreb"}),
        ({"city": "Zagreb"}, {"slot": "09:00 in Zagreb"}),
        ({"city": "Split", "people": 1}, "solo"),
        # true is not 1: booleans only equal booleans.
        ({"city": "Split", "people": True}, {"slot": None, "asked": "Split"}),
        ({"city": "Split"}, {"slot": None, "asked": "Split"}),
    ],
)
def test_rules_first_match_wins_else_default(args: dict[str, Any], expected: Any) -> None:
    assert answer(RULES, args) == expected


def test_rules_absent_argument_matches_nothing_even_null() -> None:
    stub = {"kind": "rules", "rules": [{"when": {"x": None}, "returns": "null"}], "default": "d"}
    assert answer(stub, {}) == "d"
    assert answer(stub, {"x": None}) == "null"


def test_rules_default_with_unknown_placeholder_fails() -> None:
    rt = runtime({"t": spec({"kind": "rules", "rules": [], "default": "{nope}"})})
    send(rt, "t", {})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.INVALID_ARGUMENTS
    assert "nope" in event.message
