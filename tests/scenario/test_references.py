"""Names a suite uses must exist: unknown tools, arguments and collections in faults, in a
case's `setup.action` and in `expect:` are load errors at their line, not runs that can never
pass (or never fail)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from polygon_voice.model import Suite
from polygon_voice.scenario import SuiteError, load_suite

HEAD = """\
name: demo
tools:
  update_order:
    parameters:
      type: object
      properties: {order_id: {type: string}, quantity: {type: integer}}
    stub: {kind: stateful, collection: orders, op: update, key: order_id}
  greet:
    stub: {kind: fixed, returns: hi}
backend:
  orders: {"5590": {quantity: 2}}
scenarios:
"""


def error_of(folder: Path, scenarios: str) -> SuiteError:
    path = folder / "suite.yaml"
    path.write_text(HEAD + scenarios, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return caught.value


def test_an_undeclared_action_tool_is_an_error_at_its_line(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """\
  - id: corr-1
    category: correction
    setup:
      action: {tool: update_ordr, args: {order_id: "5590"}}
""",
    )
    assert error.line == 16
    assert error.field == "scenarios[0].setup.action.tool"
    assert "unknown tool 'update_ordr'" in error.message
    assert "update_order, greet" in error.message


def test_an_action_on_a_tool_that_keeps_no_state_is_refused(tmp_path: Path) -> None:
    error = error_of(tmp_path, "  - id: a\n    setup: {action: {tool: greet}}\n")
    assert "'greet' is not a stateful tool" in error.message


def test_unknown_arguments_and_tools_in_expect(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """\
  - id: ok
    expect: {tools: {called: [{tool: update_order, args: {order_id: "1"}}]}}
  - id: bad
    expect:
      tools:
        called: [{tool: update_order, args: {qty: 3}}]
        not_called: [{tool: refund}]
""",
    )
    assert (error.line, error.field) == (18, "scenarios[1].expect.tools.called[0].args.qty")
    assert "no argument 'qty'" in error.message
    assert "order_id, quantity" in error.message
    assert error.more == 1


def test_an_unknown_collection_in_expect(tmp_path: Path) -> None:
    error = error_of(
        tmp_path, "  - id: a\n    expect: {backend: {order: {'5590': {quantity: 3}}}}\n"
    )
    assert error.field == "scenarios[0].expect.backend.order"
    assert "unknown collection 'order'" in error.message
    assert "orders" in error.message


def test_faults_for_an_unknown_tool_name_their_line(tmp_path: Path) -> None:
    error = error_of(
        tmp_path, "  - id: a\n    faults:\n      nope: [{kind: timeout, on_call: 1}]\n"
    )
    assert (error.line, error.field) == (15, "scenarios[0].faults.nope")


def test_contradicting_expectations_are_refused(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        "  - id: a\n    expect: {no_write: true, backend: {orders: {'5590': {quantity: 3}}}}\n",
    )
    assert "contradict" in error.message


def test_a_suite_built_in_code_is_checked_too() -> None:
    data = {
        "name": "demo",
        "tools": {"t": {"stub": {"kind": "fixed", "returns": 1}}},
        "scenarios": [{"id": "a", "expect": {"tools": {"called": [{"tool": "x"}]}}}],
    }
    with pytest.raises(ValidationError, match="unknown tool 'x'"):
        Suite.model_validate(data)


def test_the_shipped_suites_name_only_what_they_declare() -> None:
    root = Path(__file__).resolve().parents[2]
    for path in [
        root / "examples" / "order_line" / "suite.yaml",
        root / "examples" / "order_line" / "personas.yaml",
        *sorted((root / "src" / "polygon_voice" / "suites").glob("*.yaml")),
    ]:
        load_suite(path)  # raises on an unknown reference


def test_unknown_tools_and_arguments_in_exactly(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """\
  - id: a
    expect:
      tools:
        exactly: [{tool: update_order, args: {order_id: "1", qty: 3}}]
""",
    )
    assert error.field == "scenarios[0].expect.tools.exactly[0].args.qty"
    assert "no argument 'qty'" in error.message
    among = error_of(
        tmp_path,
        """\
  - id: a
    expect:
      tools: {exactly: [], exactly_among: [greet, refund]}
""",
    )
    assert among.field == "scenarios[0].expect.tools.exactly_among[1]"
    assert "unknown tool 'refund'" in among.message
