"""The conversation viewer in a real browser: heard vs said, tool lifecycles, axes, writes."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from polygon_voice.model import AXES, ConversationResult
from polygon_voice.store.store import Store
from tests.browser.conftest import Filled, Screen


def _calls(filled: Filled, run_id: str) -> list[ConversationResult]:
    with Store(filled.db_url) as store:
        return list(store.iter_conversations(run_id))


def _open(screen: Screen, server: str, run_id: str, call: ConversationResult) -> None:
    screen.page.goto(f"{server}/runs/{run_id}/conversations/{call.id}")
    expect(
        screen.page.locator(f"[data-testid=conversation][data-conversation={call.id}]")
    ).to_be_visible()


def test_a_noisy_call_shows_what_was_said_and_what_the_agent_heard(
    server: str, filled: Filled, screen: Screen
) -> None:
    # A three-layer call with tool calls where recognition noise changed a caller's words.
    call = next(
        c
        for c in _calls(filled, filled.noisy)
        if c.tool_calls and any(t.speaker == "caller" and t.heard != t.text for t in c.turns)
    )
    _open(screen, server, filled.noisy, call)
    page = screen.page
    turns = page.locator("[data-testid=turn]")
    expect(turns).to_have_count(len(call.turns))
    for turn in call.turns:
        shown = page.locator(f"[data-testid=turn][data-turn='{turn.index}']")
        expect(shown).to_have_attribute("data-speaker", turn.speaker.value)
        expect(shown.locator(".said")).to_contain_text(turn.text)
        if turn.speaker == "caller" and turn.heard != turn.text:
            heard = shown.locator(".heard")
            expect(heard).to_contain_text(turn.heard)
            # The words noise changed are marked, inside what the agent heard.
            expect(heard.locator(".noise-edit").first).to_be_visible()
    expect(page.locator(".clock").first).to_be_visible()
    screen.shoot()
    assert not screen.watched.problems()


def test_a_tool_error_call_shows_each_tool_call_through_its_lifecycle(
    server: str, filled: Filled, screen: Screen
) -> None:
    call = next(c for c in _calls(filled, filled.flawed) if any(t.error for t in c.tool_calls))
    _open(screen, server, filled.flawed, call)
    page = screen.page
    for tool_call in call.tool_calls:
        shown = page.locator(f"[data-testid=tool-call][data-call-id='{tool_call.call_id}']")
        steps = shown.locator(".lifecycle [data-status]")
        statuses = steps.evaluate_all("steps => steps.map(s => s.dataset.status)")
        assert statuses[: len(tool_call.history)] == [
            step.status.value for step in tool_call.history
        ]
        args = json.loads(shown.locator(".args").inner_text())
        assert args == tool_call.args
        version = tool_call.state_version
        expect(shown.locator(".state-version")).to_have_text(
            "—" if version is None else str(version)
        )
        if tool_call.idempotency_key:
            expect(shown.locator(".idempotency-key")).to_have_text(tool_call.idempotency_key)
        if tool_call.error:
            expect(shown.locator(".result")).to_contain_text(tool_call.error.value)
    writes = page.locator("[data-testid=backend-write]")
    expect(writes).to_have_count(len(call.backend_writes))
    axes = page.locator("[data-testid=axes] [data-axis]")
    assert sorted(axes.evaluate_all("rows => rows.map(r => r.dataset.axis)")) == sorted(AXES)
    # An axis's evidence links to its turn, and the link leads there.
    link = page.locator("[data-testid=axes] a[href*='turn-']").first
    target = link.get_attribute("href")
    assert target is not None
    link.click()
    expect(page.locator(f"[id='{target.split('#')[-1]}']")).to_be_in_viewport()
    screen.shoot()
    assert not screen.watched.problems()
