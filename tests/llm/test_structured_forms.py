"""The three forms of structured output and the schema each sends (docs/llm.md)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from polygon_voice.caller.llm import CallerLine
from polygon_voice.llm import LLMFormatError
from polygon_voice.llm.structured import (
    parse_structured,
    response_format,
    schema_instruction,
    sent_schema,
    with_instruction,
)

STRING_KEYWORDS = {"maxLength": 2000, "minLength": 1, "pattern": "^[a-z]+$", "format": "email"}
NUMBER_KEYWORDS = {
    "minimum": 1,
    "maximum": 5,
    "exclusiveMinimum": 0,
    "exclusiveMaximum": 6,
    "multipleOf": 1,
}


@pytest.mark.parametrize("keyword", sorted(STRING_KEYWORDS))
@pytest.mark.parametrize("form", ["json_schema", "json_object"])
def test_each_string_keyword_is_stripped_in_both_grammar_forms(keyword: str, form: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"say": {"type": "string", keyword: STRING_KEYWORDS[keyword]}},
    }
    assert sent_schema(schema, form) == {
        "type": "object",
        "properties": {"say": {"type": "string"}},
    }


@pytest.mark.parametrize("keyword", sorted(NUMBER_KEYWORDS))
def test_each_numeric_keyword_is_stripped_for_json_object_only(keyword: str) -> None:
    score = {"type": "integer", keyword: NUMBER_KEYWORDS[keyword]}
    schema = {"type": "object", "properties": {"score": score}}
    assert sent_schema(schema, "json_object")["properties"]["score"] == {"type": "integer"}
    assert sent_schema(schema, "json_schema")["properties"]["score"] == score


def test_keywords_are_stripped_everywhere_but_property_names_stay() -> None:
    schema = {
        "type": "object",
        "properties": {
            "format": {"type": "string", "maxLength": 3},  # a property NAMED format stays
            "list": {"type": "array", "items": {"type": "string", "pattern": "x"}},
            "either": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
        },
        "$defs": {"Line": {"type": "string", "format": "date"}},
        "additionalProperties": {"type": "string", "maxLength": 9},
    }
    sent = sent_schema(schema, "json_schema")
    assert sent["properties"]["format"] == {"type": "string"}
    assert sent["properties"]["list"]["items"] == {"type": "string"}
    assert sent["properties"]["either"]["anyOf"][0] == {"type": "string"}
    assert sent["$defs"]["Line"] == {"type": "string"}
    assert sent["additionalProperties"] == {"type": "string"}
    assert schema["properties"]["format"]["maxLength"] == 3  # the full schema is untouched


def test_one_of_becomes_any_of_and_not_stays_verbatim() -> None:
    schema = {
        "oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 4}],
        "not": {"type": "string", "maxLength": 1},
    }
    sent = sent_schema(schema, "json_schema")
    # Loosened alike, both branches would match every string: oneOf would then refuse all.
    assert sent["anyOf"] == [{"type": "string"}, {"type": "string"}]
    assert "oneOf" not in sent
    assert sent["not"] == {"type": "string", "maxLength": 1}


def test_the_caller_line_is_sent_without_its_length_bound() -> None:
    full = CallerLine.model_json_schema()
    assert full["properties"]["say"]["maxLength"] == 2000
    sent = response_format(CallerLine)
    assert sent is not None
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "CallerLine"
    assert "maxLength" not in sent["json_schema"]["schema"]["properties"]["say"]


def test_the_three_forms_of_response_format() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer", "maximum": 5}}}
    as_schema = response_format(schema, "judgement", "json_schema")
    assert as_schema == {
        "type": "json_schema",
        "json_schema": {"name": "judgement", "schema": schema},
    }
    as_object = response_format(schema, "judgement", "json_object")
    assert as_object == {
        "type": "json_object",
        "schema": {"type": "object", "properties": {"score": {"type": "integer"}}},
    }
    assert response_format(schema, "judgement", "prompt") is None


def test_the_prompt_form_describes_the_full_schema_in_the_first_system_message() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer", "maximum": 5}}}
    note = schema_instruction(schema)
    assert '"maximum": 5' in note
    messages = [{"role": "system", "content": "Judge."}, {"role": "user", "content": "x"}]
    sent = with_instruction(messages, note)
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"] == f"Judge.\n\n{note}"
    assert messages[0]["content"] == "Judge."  # not changed in place
    alone = with_instruction([{"role": "user", "content": "x"}], note)
    assert alone[0] == {"role": "system", "content": note}


def test_the_prompt_form_reads_json_inside_a_fence_and_still_validates() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer", "maximum": 5}}}
    assert parse_structured('```json\n{"score": 4}\n```', schema, "prompt") == {"score": 4}
    with pytest.raises(LLMFormatError):
        parse_structured('```json\n{"score": 4}\n```', schema, "json_schema")
    with pytest.raises(LLMFormatError, match="score"):
        parse_structured('{"score": 1023984760000000}', schema, "prompt")


# Schemas built from the constraint keywords, nested in objects, arrays, anyOf and oneOf.
_strings = st.fixed_dictionaries(
    {"type": st.just("string")},
    optional={
        "maxLength": st.integers(0, 5),
        "minLength": st.integers(0, 5),
        "pattern": st.sampled_from(["^a", "b$", "^[ab]*$"]),
        "format": st.sampled_from(["email", "date"]),
    },
)
_numbers = st.fixed_dictionaries(
    {"type": st.sampled_from(["integer", "number"])},
    optional={
        "minimum": st.integers(-3, 3),
        "maximum": st.integers(-3, 3),
        "exclusiveMinimum": st.integers(-3, 3),
        "exclusiveMaximum": st.integers(-3, 3),
        "multipleOf": st.sampled_from([1, 2, 3]),
    },
)
_schemas = st.recursive(
    st.one_of(_strings, _numbers, st.just({"type": "boolean"})),
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(
            lambda props: {"type": "object", "properties": props},
            st.dictionaries(st.sampled_from(["a", "b", "format"]), inner, max_size=2),
        ),
        st.builds(lambda many: {"anyOf": many}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda many: {"oneOf": many}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=5,
)
_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.floats(-5, 5, allow_nan=False),
        st.sampled_from(["", "a", "ab", "ba", "aaaaaa", "b@c.de", "2024-01-02"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "format"]), inner, max_size=3),
    ),
    max_leaves=6,
)


ONE_OF_BY_LENGTH = {
    "oneOf": [{"type": "string", "maxLength": 1}, {"type": "string", "minLength": 2}]
}


@settings(max_examples=400, deadline=None)
@example(schema=ONE_OF_BY_LENGTH, value="a", form="json_schema")  # one branch, not two
@example(schema={"type": "integer", "minimum": 1, "maximum": 5}, value=3, form="json_object")
@given(schema=_schemas, value=_values, form=st.sampled_from(["json_schema", "json_object"]))
def test_the_sent_schema_accepts_everything_the_full_one_accepts(
    schema: dict[str, Any], value: Any, form: Any
) -> None:
    if Draft202012Validator(schema).is_valid(value):
        assert Draft202012Validator(sent_schema(schema, form)).is_valid(value)
