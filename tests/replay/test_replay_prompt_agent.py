"""Replaying a real call against a prompt agent with a changed prompt, on the fake LLM server.

The recorded agent changed order 5590 to quantity 3. The new agent (its prompt changed, its
model the fake server's script) looks the order up with the same arguments — and gets the
recorded result — then updates it to quantity 4 — no recorded result for that — and says it
could not change the order. The next recorded caller line ("No, that's all, thank you")
answered "Done ... anything else?": the rule marks the turn, and compare parts there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from polygon_voice.api import SetupError
from polygon_voice.api.replay import ReplayOptions, ReplayResult, replay_run
from polygon_voice.compare import compare
from polygon_voice.model import CallStatus, EndReason
from polygon_voice.replay.caller import HANDOVER_KIND, MISMATCH_KIND
from polygon_voice.replay.stubs import NO_RECORD
from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer, Rule, ToolCallSpec
from tests.replay.conftest import first_call_only, import_judged

GREETING = "Hello, you are through to the order service. How can I help?"
READ_BACK = "I'll change order 5590 to quantity 4."
REFUSAL = "I'm sorry, I could not change order 5590."
# The agent's responses, in order: the greeting, a lookup, a read-back with the update, the
# refusal, a goodbye.
AGENT_RULES = [
    Rule(role="agent", text=GREETING, times=1),
    Rule(
        role="agent",
        tool_calls=[ToolCallSpec(name="lookup_order", arguments={"order_id": "5590"}, id="a1")],
        times=1,
    ),
    Rule(
        role="agent",
        text=READ_BACK,
        tool_calls=[
            ToolCallSpec(
                name="update_order", arguments={"order_id": "5590", "quantity": 4}, id="a2"
            )
        ],
        times=1,
    ),
    Rule(role="agent", text=REFUSAL, times=1),
    Rule(role="agent", text="Goodbye!"),
]


# The requests the fake server got in the last replay (read by the hand-over test).
REQUESTS: list[Any] = []


def prompt_agent(tmp_path: Path, base_url: str) -> str:
    (tmp_path / "prompt.md").write_text(
        "You are the order line. Never raise a quantity by less than four.\n", encoding="utf-8"
    )
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"model: fake-model\nbase_url: {base_url}\nsystem_prompt: prompt.md\n", encoding="utf-8"
    )
    return f"prompt:{config}"


def replay(
    tmp_path: Path, store: Store, on_mismatch: str = "continue", extra: list[Rule] | None = None
) -> tuple[str, ReplayResult]:
    imported = import_judged(store, first_call_only(tmp_path))
    with FakeLLMServer([*(extra or []), *AGENT_RULES]) as server:
        options = ReplayOptions(
            agent=prompt_agent(tmp_path, server.base_url),
            on_mismatch=on_mismatch,  # type: ignore[arg-type]
            concurrency=1,
            write_files=False,
            llm_config=_caller_config(tmp_path, server.base_url) if extra else None,
        )
        result = replay_run(imported, options, store=store)
        REQUESTS[:] = server.requests
        return imported, result


def _caller_config(tmp_path: Path, base_url: str) -> Path:
    path = tmp_path / "llm.yaml"
    path.write_text(
        f"llm:\n  caller:\n    model: fake-caller\n    base_url: {base_url}\n", encoding="utf-8"
    )
    return path


def test_the_changed_prompt_is_marked_where_it_answers_differently(
    tmp_path: Path, store: Store
) -> None:
    imported, result = replay(tmp_path, store)
    call = store.get_conversation(result.run.run_id, "order-call-1")
    texts = [(t.index, t.speaker.value, t.text) for t in call.turns]
    assert texts[:4] == [
        (0, "agent", GREETING),
        (1, "caller", "Hi, I'd like to change order 5590 to quantity 3, please."),
        (2, "agent", READ_BACK),
        (3, "agent", REFUSAL),
    ]
    # The same lookup got the recorded result; the different update got the clear error.
    lookup, update = call.tool_calls
    assert lookup.status is CallStatus.COMPLETED
    assert lookup.result["quantity"] == 2
    assert update.args == {"order_id": "5590", "quantity": 4}
    assert update.status is CallStatus.FAILED
    assert update.error_message.startswith(NO_RECORD)
    # The mismatch: marked once, at the new agent's answer (from turn 2 on), before the second
    # recorded caller line.
    marks = [e.data for e in call.trace if e.kind == MISMATCH_KIND]
    assert len(marks) == 1
    assert (marks[0]["turn"], marks[0]["line"], marks[0]["rule"]) == (2, 2, "answered_else")
    assert "refused" in marks[0]["reason"]
    # continue: the recorded line was played anyway.
    assert texts[4] == (4, "caller", "No, that's all, thank you. Bye.")
    assert (result.mismatches, result.first_mismatch) == (1, {"order-call-1": 2})
    # The replay is judged against the imported expectation: the update to 3 never happened.
    expect = dict(store.iter_stage_results(result.run.run_id, "expect"))
    assert expect["order-call-1"]["met"] is False
    # compare: the divergence point is the first turn the new agent answered differently.
    diverged = compare(store, [imported, result.run.run_id])["divergence"]
    assert [(row["scenario"], row["turn"], row["rule"]) for row in diverged] == [
        ("order-call-1", 2, "tool_calls")
    ]


def test_stop_ends_the_call_at_the_marked_turn(tmp_path: Path, store: Store) -> None:
    _, result = replay(tmp_path, store, on_mismatch="stop")
    call = store.get_conversation(result.run.run_id, "order-call-1")
    assert [t.speaker.value for t in call.turns] == ["agent", "caller", "agent", "agent"]
    assert call.end.reason is EndReason.CALLER_HANGUP
    assert call.end.message.startswith("replay stopped before recorded caller line 2: ")


def test_llm_hands_over_to_the_caller_model_seeded_with_the_call(
    tmp_path: Path, store: Store
) -> None:
    said = {"say": "Oh. Then please just leave it at 3. Bye.", "end_call": True}
    caller_rule = Rule(role="caller", json=said)
    _, result = replay(tmp_path, store, on_mismatch="llm", extra=[caller_rule])
    call = store.get_conversation(result.run.run_id, "order-call-1")
    assert [
        e.kind for e in call.trace if e.kind.startswith("replay_m") or e.kind == HANDOVER_KIND
    ] == [
        MISMATCH_KIND,
        HANDOVER_KIND,
    ]
    # The model's line replaced the recorded one; it was asked with the conversation so far
    # and with the recorded lines it had not played yet as its goal.
    assert call.turns[4].text == said["say"]
    asked = [r.body["messages"] for r in REQUESTS if r.body.get("model") == "fake-caller"]
    assert len(asked) == 1
    system, *history = asked[0]
    assert "No, that's all, thank you. Bye." in system["content"]
    spoken = [m["content"] for m in history]
    assert GREETING in spoken
    assert REFUSAL in " ".join(spoken)


def test_llm_without_a_caller_model_is_refused_before_anything_runs(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("POLYGON_CALLER_MODEL", "POLYGON_MODEL", "POLYGON_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    imported = import_judged(store, first_call_only(tmp_path))
    before = len(store.list_runs())
    options = ReplayOptions(agent="reference:robust", on_mismatch="llm", write_files=False)
    with pytest.raises(SetupError, match="caller"):
        replay_run(imported, options, store=store)
    assert len(store.list_runs()) == before  # nothing was stored
