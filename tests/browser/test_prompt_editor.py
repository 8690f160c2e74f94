"""The prompt editor in a real browser: marks that follow the text, save, staleness."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.conftest import Filled, Screen, open_prompt_editor

INSERTED = "Kindly note: "
# A word-level finding: its mark keeps its words when text is typed in front of it
# (a sentence-level one would take the typed words in).
KIND = "vague-wording"


def _marks(page: Page) -> list[dict[str, str]]:
    found: list[dict[str, str]] = page.locator(
        "[data-testid=prompt-marked] mark.lint-finding"
    ).evaluate_all("marks => marks.map(m => ({...m.dataset, text: m.textContent, title: m.title}))")
    return found


def test_typing_before_a_marked_phrase_moves_its_mark_after_saving(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    open_prompt_editor(page, server, filled.prompt)
    marks = _marks(page)
    assert marks, "the weak prompt has lint marks"
    assert all(m["axis"] and m["title"] for m in marks), "each mark names its axis and fix"
    expect(page.locator("[data-testid=lint-scores] [data-axis]").first).to_be_visible()
    # Personas generated from this file are current until it changes.
    rows = page.locator("[data-testid=prompt-personas] [data-testid=persona-row]")
    expect(rows).to_have_count(len(filled.personas))
    expect(page.locator("[data-testid=prompt-personas] .stale")).to_have_count(0)
    screen.shoot("before")

    chosen = [m for m in marks if m["kind"] == KIND][-1]
    start = int(chosen["start"])
    text = page.locator("textarea[data-testid=prompt-text]")
    assert text.input_value()[start : int(chosen["end"])] == chosen["text"]
    text.evaluate("(el, at) => { el.focus(); el.setSelectionRange(at, at); }", start)
    page.keyboard.type(INSERTED)
    page.locator("[data-testid=save-button]").click()
    page.wait_for_load_state()

    moved = [
        m
        for m in _marks(page)
        if m["kind"] == KIND and m["text"] == chosen["text"] and int(m["start"]) > start
    ]
    assert moved, "the mark is still there after saving"
    assert int(moved[0]["start"]) == start + len(INSERTED)
    assert int(moved[0]["end"]) == int(chosen["end"]) + len(INSERTED)
    saved = filled.prompt.read_text()
    assert saved[start : start + len(INSERTED)] == INSERTED
    assert saved == text.input_value()
    # The file changed after the personas were made from it: they are stale now (SIM-3).
    expect(page.locator("[data-testid=prompt-personas] .stale")).to_have_count(len(filled.personas))
    screen.shoot("after")
    assert not screen.watched.problems()
