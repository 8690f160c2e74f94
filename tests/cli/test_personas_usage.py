"""`polygon personas generate` stores what each persona's model requests spent and shows it;
a persona whose facts are empty or blank is asked again once, then refused, never stored."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from polygon_voice.store import PersonaUsage
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import Polygon
from tests.cli.test_personas import ORDER_PROMPT, no_model, stored

__all__ = ["no_model"]  # the autouse fixture: no model from the developer's shell

GOOD = {"name": "Maria Lopez", "goal": "Change order 4821.", "facts": {"order_id": "4821"}}
BLANK = {"name": "Maria Lopez", "goal": "Change my order.", "facts": {"order_id": " ", "": 3}}


@pytest.fixture
def generate(polygon: Polygon) -> Iterator[Callable[..., tuple[int, str, str]]]:
    """`polygon personas generate --n N` against a fake caller model with these rules."""
    (polygon.workdir / "prompt.md").write_text(ORDER_PROMPT.read_text())
    servers: list[FakeLLMServer] = []

    def run(*rules: Rule, n: int = 1) -> tuple[int, str, str]:
        server = FakeLLMServer(list(rules)).start()
        servers.append(server)
        role = {"model": "fake-model", "base_url": server.base_url, "max_retries": 0}
        config = polygon.workdir / "llm.json"
        config.write_text(json.dumps({"llm": {"caller": role}}), "utf-8")
        return polygon(
            "personas", "generate", "--prompt", "prompt.md", "--n", str(n),
            "--llm-config", str(config),
        )  # fmt: skip

    yield run
    for server in servers:
        server.stop()


def test_each_persona_stores_and_shows_what_its_requests_spent(
    polygon: Polygon, generate: Callable[..., tuple[int, str, str]]
) -> None:
    code, out, err = generate(
        Rule(
            role="caller",
            contains="Persona number 1:",
            times=1,
            json=BLANK,
            tokens_in=200,
            tokens_out=40,
        ),
        Rule(role="caller", json=GOOD, tokens_in=210, tokens_out=35),
        n=2,
    )
    assert code == 0, err
    first, second = stored(polygon)
    # The first persona was asked twice (blank facts the first time); the second once.
    assert first.usage == PersonaUsage(requests=2, tokens_in=410, tokens_out=75)
    assert second.usage == PersonaUsage(requests=1, tokens_in=210, tokens_out=35)
    assert first.persona.facts == {"order_id": "4821"}
    assert "model usage: 3 requests (0 cached, 0 retried, 0 failed), 620 tokens in, 110 out" in (
        " ".join(out.split())
    )

    code, out, _ = polygon("personas", "show", first.id)
    assert code == 0
    assert "model usage 2 requests (0 cached), 410 tokens in, 75 out" in " ".join(out.split())
    code, out, _ = polygon("personas", "list")
    assert "tokens" in out
    assert "410/75" in out
    assert "210/35" in out


def test_a_persona_with_blank_facts_twice_is_refused_and_not_stored(
    polygon: Polygon, generate: Callable[..., tuple[int, str, str]]
) -> None:
    code, out, err = generate(Rule(role="caller", json=BLANK))
    assert code == 3
    assert "the model's persona has no facts (asked twice)" in " ".join(err.split())
    assert "No persona stored" in out
    assert stored(polygon) == []


def test_personas_made_without_a_model_have_no_usage(polygon: Polygon, tmp_path: Path) -> None:
    (polygon.workdir / "prompt.md").write_text(ORDER_PROMPT.read_text())
    code, out, err = polygon("personas", "generate", "--prompt", "prompt.md", "--n", "2")
    assert code == 0, err
    assert [record.usage for record in stored(polygon)] == [None, None]
    assert "model usage" not in out
    code, out, _ = polygon("personas", "list")
    assert "tokens" not in out
