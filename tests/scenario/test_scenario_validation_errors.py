"""Validation errors name the exact line, column and dotted field path, with a readable message."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.scenario import SuiteError, load_suite


def error_of(folder: Path, text: str, name: str = "suite.yaml") -> SuiteError:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return caught.value


def test_bad_enum_value_gives_the_documented_message(tmp_path: Path) -> None:
    text = """\
name: demo
scenarios:
  - id: a
  - id: b
  - id: corr-02
    script:
      - barge_in:
          at: mid_sentence
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (8, 15)
    assert error.field == "scenarios[2].script[0].barge_in.at"
    expected = (
        "Input should be 'mid_speech', 'during_tool_prep' or 'after_tool_fired' "
        "(got 'mid_sentence')"
    )
    assert error.message == expected
    assert error.more == 0
    assert str(error) == f"{tmp_path / 'suite.yaml'}:8:15: {error.field}: {expected}"
    assert "https://" not in str(error)


def test_missing_field_points_at_the_parent_mapping(tmp_path: Path) -> None:
    text = """\
name: demo
scenarios:
  - id: x
    script:
      - say: hi
      - barge_in:
          say: wait
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (7, 11)
    assert error.field == "scenarios[0].script[1].barge_in"
    assert error.message == "field required: 'at'"


def test_several_missing_fields_of_one_mapping_are_one_error(tmp_path: Path) -> None:
    text = """\
name: demo
tools:
  save:
    stub:
      kind: stateful
      op: update
scenarios: [{id: x}]
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (5, 7)
    assert error.field == "tools.save.stub"
    assert error.message == "fields required: 'collection', 'key'"
    assert error.more == 0


def test_missing_top_level_fields(tmp_path: Path) -> None:
    error = error_of(tmp_path, "# a suite\ndescription: nothing else\n")
    assert (error.line, error.column, error.field) == (2, 1, None)
    assert error.message == "fields required: 'name', 'scenarios'"


def test_unknown_field_points_at_the_key_and_suggests_the_right_one(tmp_path: Path) -> None:
    text = """\
name: demo
scenarios:
  - id: x
    script:
      - say: hi
      - barge-in: {at: mid_speech}
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (6, 9)
    assert error.field == "scenarios[0].script[1].barge-in"
    assert error.message == "unknown field 'barge-in' (did you mean 'barge_in'?)"


def test_unknown_field_without_a_close_match_lists_the_allowed_ones(tmp_path: Path) -> None:
    text = """\
name: demo
scenarios:
  - id: x
    script:
      - barge_in: {at: mid_speech, xyz: 1}
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (5, 36)
    assert error.field == "scenarios[0].script[0].barge_in.xyz"
    assert error.message == "unknown field 'xyz' (allowed: at, say, tool, on_call)"


def test_step_validator_error_points_at_the_step(tmp_path: Path) -> None:
    text = """\
name: demo
scenarios:
  - id: x
    script:
      - say: hi
      - say: bye
        hangup: true
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (6, 9)
    assert error.field == "scenarios[0].script[1]"
    assert error.message == "a script step takes exactly one of: say, barge_in, silence, hangup"


def test_suite_validator_error_points_at_the_suite(tmp_path: Path) -> None:
    text = "# two calls, one id\nname: demo\nscenarios:\n  - id: x\n  - id: x\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.column, error.field) == (2, 1, None)
    assert error.message == "scenario id 'x' is used twice"


def test_unknown_stub_kind_names_the_allowed_kinds(tmp_path: Path) -> None:
    text = """\
name: demo
tools:
  lookup:
    description: find an order
    stub:
      returns: {}
      kind: fixd
scenarios: [{id: x}]
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (7, 13)
    assert error.field == "tools.lookup.stub.kind"
    assert error.message == (
        "unknown kind 'fixd': expected 'fixed', 'template', 'rules' or 'stateful'"
    )


def test_stub_without_kind_names_the_allowed_kinds(tmp_path: Path) -> None:
    text = "name: demo\ntools:\n  lookup:\n    stub: {returns: 1}\nscenarios: [{id: x}]\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (4, 11)
    assert error.field == "tools.lookup.stub"
    assert error.message == (
        "field required: 'kind' (one of 'fixed', 'template', 'rules', 'stateful')"
    )


def test_stub_that_is_not_a_mapping(tmp_path: Path) -> None:
    text = "name: demo\ntools:\n  lookup:\n    stub: fixed\nscenarios: [{id: x}]\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.column, error.field) == (4, 11, "tools.lookup.stub")
    assert error.message == "expected a mapping (got 'fixed')"


def test_union_of_number_and_mapping_is_one_readable_error(tmp_path: Path) -> None:
    text = """\
name: demo
tools:
  t:
    stub: {kind: fixed}
    latency: slow
scenarios: [{id: x}]
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column, error.field) == (5, 14, "tools.t.latency")
    assert error.message == "expected a number or a mapping (got 'slow')"
    assert error.more == 0


def test_union_picks_the_branch_the_mapping_meant(tmp_path: Path) -> None:
    text = """\
name: demo
tools:
  t:
    stub: {kind: fixed}
    latency:
      distribution: uniform
      low: -1
      high: 2
scenarios: [{id: x}]
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column, error.field) == (7, 12, "tools.t.latency.low")
    assert error.message == "Input should be greater than or equal to 0 (got -1)"
    assert error.more == 0


def test_unknown_latency_distribution(tmp_path: Path) -> None:
    text = """\
name: demo
tools:
  t:
    stub: {kind: fixed}
    latency: {distribution: normal}
scenarios: [{id: x}]
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (5, 29)
    assert error.field == "tools.t.latency.distribution"
    assert error.message == "unknown distribution 'normal': expected 'uniform' or 'lognormal'"
    assert error.more == 0


def test_validator_inside_a_union_branch(tmp_path: Path) -> None:
    text = """\
name: demo
tools:
  t:
    stub: {kind: fixed}
    latency: {distribution: uniform, low: 2, high: 1}
scenarios: [{id: x}]
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column, error.field) == (5, 14, "tools.t.latency")
    assert error.message == "'high' must not be below 'low'"


def test_scalar_union_of_facts(tmp_path: Path) -> None:
    text = "name: demo\nscenarios:\n  - id: x\n    persona:\n      facts: {order: [1, 2]}\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (5, 22)
    assert error.field == "scenarios[0].persona.facts.order"
    assert error.message == ("expected a string, an integer, a number or a boolean (got a list)")
    assert error.more == 0


def test_rules_stub_tag_does_not_confuse_the_rules_field(tmp_path: Path) -> None:
    text = """\
name: demo
tools:
  t:
    stub:
      kind: rules
      rules:
        - when: {id: 1}
          retuns: {}
scenarios: [{id: x}]
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (8, 11)
    assert error.field == "tools.t.stub.rules[0].retuns"
    assert error.message == "unknown field 'retuns' (did you mean 'returns'?)"


def test_non_string_record_key(tmp_path: Path) -> None:
    text = "name: demo\nbackend:\n  orders:\n    1001: {status: open}\nscenarios: [{id: x}]\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (4, 5)
    assert error.field == "backend.orders[1001]"
    assert error.message == "keys must be strings (got 1001); put the key in quotes"


def test_odd_keys_are_bracketed_in_the_path(tmp_path: Path) -> None:
    text = "name: demo\ntools:\n  get order:\n    stub: {kind: nope}\nscenarios: [{id: x}]\n"
    error = error_of(tmp_path, text)
    assert error.field == "tools['get order'].stub.kind"
    assert (error.line, error.column) == (4, 18)


def test_empty_scenario_list(tmp_path: Path) -> None:
    error = error_of(tmp_path, "name: demo\nscenarios: []\n")
    assert (error.line, error.column, error.field) == (2, 12, "scenarios")
    assert "at least 1 item" in error.message


def test_long_bad_value_is_truncated(tmp_path: Path) -> None:
    long = "x" * 200
    text = f"name: demo\nscenarios:\n  - id: x\n    persona: {{type: {long}}}\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.field) == (4, "scenarios[0].persona.type")
    assert error.message.endswith(f"(got '{'x' * 37}...')")
    assert len(error.message) < 200


def test_first_error_by_line_is_reported_with_the_count_of_the_rest(tmp_path: Path) -> None:
    # pydantic reports in model field order (tools before scenarios); the file order wins.
    text = """\
name: demo
scenarios:
  - id: x
    max_turns: 0
  - id: y
    script: [{say: hi, silence: true}]
tools:
  t:
    stub: {kind: fixed}
    timeout: -1
settings:
  loop_overlap: 2
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (4, 16)
    assert error.field == "scenarios[0].max_turns"
    assert error.message == "Input should be greater than or equal to 1 (got 0)"
    assert error.more == 3
    assert str(error).endswith(" (and 3 more errors)")


def test_json_validation_error_has_line_and_column(tmp_path: Path) -> None:
    text = """\
{
  "name": "demo",
  "scenarios": [
    {"id": "x",
     "script": [{"say": "hi"}, {"barge_in": {"at": "mid_sentence"}}]}
  ]
}
"""
    error = error_of(tmp_path, text, "suite.json")
    assert (error.line, error.column) == (5, 52)
    assert error.field == "scenarios[0].script[1].barge_in.at"
    assert "'mid_speech'" in error.message
    assert error.message.endswith("(got 'mid_sentence')")


def test_json_unknown_and_missing_fields(tmp_path: Path) -> None:
    text = """\
{"name": "demo",
 "scenarios": [{"id": "x",
  "script": [{"barge_in": {}}],
  "sya": 1}]}
"""
    error = error_of(tmp_path, text, "suite.json")
    assert (error.line, error.column) == (3, 27)
    assert error.field == "scenarios[0].script[0].barge_in"
    assert error.message == "field required: 'at'"
    assert error.more == 1
