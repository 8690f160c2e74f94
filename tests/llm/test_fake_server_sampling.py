"""The fake LLM server's temperature conditions: a script can play a model that answers one
way when cool and another when hot (the server's log says which rule answered)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.testing import FakeLLMServer, Rule
from polygon_voice.testing.script import load_script

RULES = [
    Rule(temperature_at_most=0.5, text="Order 5590 now has 3 items."),
    Rule(temperature_above=0.5, temperature_at_most=1.0, text="Order 5590 now has 4 items."),
    Rule(temperature_above=1.0, text="Order 5509, was it?"),
    Rule(text="No temperature sent."),
]


def ask(server: FakeLLMServer, **sampling: Any) -> str:
    body = {"model": "m", "messages": [{"role": "user", "content": "Make 5590 three."}]}
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps({**body, **sampling}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        content: str = json.load(response)["choices"][0]["message"]["content"]
        return content


@pytest.mark.parametrize(
    ("sampling", "rule", "text"),
    [
        ({"temperature": 0}, 0, "Order 5590 now has 3 items."),
        ({"temperature": 0.5}, 0, "Order 5590 now has 3 items."),  # at most: inclusive
        ({"temperature": 0.7}, 1, "Order 5590 now has 4 items."),
        ({"temperature": 1}, 1, "Order 5590 now has 4 items."),
        ({"temperature": 1.5}, 2, "Order 5509, was it?"),
        ({}, 3, "No temperature sent."),  # no temperature: no temperature rule matches
        ({"temperature": "hot"}, 3, "No temperature sent."),
        ({"temperature": True}, 3, "No temperature sent."),
    ],
)
def test_the_rule_that_answers_follows_the_request_s_temperature(
    sampling: dict[str, Any], rule: int, text: str
) -> None:
    with FakeLLMServer(RULES) as server:
        assert ask(server, **sampling) == text
        assert [logged.rule for logged in server.requests] == [rule]


def test_temperature_conditions_combine_with_the_others() -> None:
    rules = [Rule(regex="nothing like this", temperature_above=0.5, text="no"),
             Rule(temperature_above=0.5, text="hot")]  # fmt: skip
    with FakeLLMServer(rules) as server:
        assert ask(server, temperature=0.9) == "hot"
        assert [logged.rule for logged in server.requests] == [1]


def test_a_script_file_names_the_bad_temperature_range(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(
        "rules:\n  - {text: ok}\n  - {temperature_above: 0.7, temperature_at_most: 0.2, text: x}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"rules\.1.*temperature_above must be below"):
        load_script(path)
    path.write_text("rules:\n  - {temperature_above: -1, text: x}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"rules\.0\.temperature_above"):
        load_script(path)
