"""Reading an answer skips the walk for unstorable code points only when none can be there."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from polygon_voice.llm.reply import parse_completion
from polygon_voice.textsafe import storable


def completion(content: str, arguments: str, ascii_only: bool) -> bytes:
    message = {
        "content": content,
        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": arguments}}],
    }
    return json.dumps({"choices": [{"message": message}]}, ensure_ascii=ascii_only).encode(
        "utf-8", errors="surrogatepass"
    )


# Lone surrogates and NUL included (hypothesis leaves surrogates out of text by default).
ANY_TEXT = st.text(st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "\x00"])))


@given(
    ANY_TEXT,
    st.dictionaries(st.text(max_size=5), ANY_TEXT, max_size=3),
    st.booleans(),
)
def test_the_reply_is_what_the_full_walk_gives(
    content: str, arguments: dict[str, str], ascii_only: bool
) -> None:
    raw = completion(content, json.dumps(arguments), ascii_only)
    reply = parse_completion(raw)
    # The reference: every string walked and cleaned, whatever the body holds.
    text = raw.decode("utf-8", errors="replace")
    body, count = storable(json.loads(text))
    message = body["choices"][0]["message"]
    expected_arguments, argument_count = storable(
        json.loads(message["tool_calls"][0]["function"]["arguments"])
    )
    assert reply.text == message["content"]
    assert reply.tool_calls[0].arguments == expected_arguments
    assert reply.sanitised == count + argument_count + (text.encode() != raw)


def test_an_escaped_surrogate_and_nul_are_still_replaced() -> None:
    raw = b'{"choices": [{"message": {"content": "a \\ud800 b \\u0000 c"}}]}'
    reply = parse_completion(raw)
    assert reply.text == "a \ufffd b \ufffd c"
    assert reply.sanitised == 2
