"""Hypothesis strategies shared by the import tests: any JSON value, and near-miss records."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)


def json_values(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    """Any JSON value (NaN and infinities included: Python's json accepts them)."""
    return st.recursive(
        SCALARS,
        lambda children: (
            st.lists(children, max_size=5)
            | st.dictionaries(st.text(max_size=12), children, max_size=5)
        ),
        max_leaves=max_leaves,
    )


ROLE = st.sampled_from(["system", "user", "assistant", "tool", "developer", "bot", 3, None])


def chat_messages() -> st.SearchStrategy[Any]:
    """Lists of message-like objects: mostly the right keys, often the wrong values."""
    message = st.fixed_dictionaries(
        {"role": ROLE},
        optional={
            "content": json_values(5),
            "tool_calls": st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "id": st.sampled_from(["c1", "c2", ""]) | json_values(2),
                        "function": st.fixed_dictionaries(
                            {},
                            optional={
                                "name": st.text(max_size=5) | json_values(2),
                                "arguments": st.sampled_from(["{}", '{"a":1}', "[", ""])
                                | json_values(3),
                            },
                        )
                        | json_values(2),
                    },
                ),
                max_size=3,
            )
            | json_values(2),
            "tool_call_id": st.sampled_from(["c1", "c2", "zz"]) | json_values(2),
        },
    )
    return st.lists(message | json_values(3), max_size=8)
