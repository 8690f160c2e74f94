"""Hostile text on every screen: no payload runs, the CSP never fires, the report stays offline.

The hostile run's caller lines, persona, scenario and tool results and the prompt file hold
`<script>`, `onerror=` and `javascript:` payloads (tests/payloads.py). Each would open a
dialog if it became markup; a dialog listener, a console listener (CSP violations are logged
there) and the page's errors must stay empty, and the payloads must be on the screen as text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from polygon_voice.store.store import Store
from tests.browser.conftest import VIEWPORT, Filled, Screen, open_prompt_editor, watch
from tests.payloads import HOSTILE_SCENARIO, IMG, LINK, PAYLOADS, SCRIPT

# Every .chart holds an svg (vega-embed has drawn it) or says it has nothing to draw.
CHARTS_DRAWN = (
    "() => [...document.querySelectorAll('.chart')]"
    ".every(c => c.querySelector('svg, .chart-empty, .chart-error'))"
)
# Elements a payload would have made had it become markup.
INJECTED = "img[src=x], [onerror], a[href^='javascript:' i], iframe, object, embed"


def _injected_scripts(page: Page) -> list[str]:
    found: list[str] = page.locator("script").evaluate_all(
        "scripts => scripts.filter(s => !s.src && s.type !== 'application/json')"
        ".map(s => s.textContent).filter(t => t.includes('alert('))"
    )
    return found


def _assert_inert(screen: Screen, label: str, expect_payloads: bool = True) -> None:
    """The page drew its charts, shows the payloads as text, and nothing ran."""
    page = screen.page
    page.wait_for_function(CHARTS_DRAWN)
    screen.shoot(label)
    errors = page.locator(".chart-error").all_text_contents()
    assert not errors, f"{label}: {errors}"
    watched = screen.watched
    assert not watched.dialogs, f"{label}: a payload ran: {watched.dialogs}"
    assert not watched.csp_violations(), f"{label}: {watched.csp_violations()}"
    assert not watched.problems(), f"{label}: {watched.problems()}"
    assert page.locator(INJECTED).count() == 0, f"{label}: a payload became an element"
    assert not _injected_scripts(page), f"{label}: a payload became a script"
    if expect_payloads:
        # All text, folded sections too; the JSON of chart specs escapes "<", so a "<script>"
        # found here is text on the page.
        text = page.locator("body").text_content() or ""
        assert SCRIPT in text, f"{label}: the payload is not shown as text"


def test_no_payload_runs_on_any_screen_of_the_app(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    with Store(filled.db_url) as store:
        calls = sorted(store.conversation_ids(filled.hostile))
    pages = {
        "run": f"/runs/{filled.hostile}",
        **{
            f"conversation-{call}": f"/runs/{filled.hostile}/conversations/{call}" for call in calls
        },
        "persona": f"/personas/{filled.personas[0]}",
        "compare": f"/compare?run={filled.hostile}&run={filled.robust}",
    }
    for label, path in pages.items():
        page.goto(server + path)
        # The caller who speaks in payloads shows them; elsewhere they may not be on screen.
        _assert_inert(screen, label, expect_payloads=label == f"conversation-{HOSTILE_SCENARIO}")
    page.goto(f"{server}/runs/{filled.hostile}/conversations/{HOSTILE_SCENARIO}")
    caller = page.locator("[data-testid=turn][data-speaker=caller] .said").first
    expect(caller).to_contain_text(SCRIPT)
    expect(page.locator("[data-testid=tool-call] .result").first).to_contain_text(IMG)
    for label, path in {"runs": "/", "personas": "/personas", "prompts": "/prompts"}.items():
        page.goto(server + path)
        _assert_inert(screen, label, expect_payloads=False)


def test_no_payload_runs_in_the_prompt_editor_when_linted(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    open_prompt_editor(page, server, filled.prompt)
    _assert_inert(screen, "editor")
    marked = page.locator("[data-testid=prompt-marked]")
    for payload in PAYLOADS:
        expect(marked).to_contain_text(payload)
    # Typed in and linted (not saved): shown marked, still text.
    text = page.locator("textarea[data-testid=prompt-text]")
    text.fill(text.input_value() + f"\n\nNever say {SCRIPT} or {LINK} to {IMG}.")
    page.locator("[data-testid=lint-button]").click()
    page.wait_for_load_state()
    _assert_inert(screen, "editor-linted")
    expect(marked).to_contain_text(f"Never say {SCRIPT} or {LINK}")


def _offline(browser: Browser, report: Path) -> tuple[Screen, list[str]]:
    """The report opened from disk, every http(s) request refused and recorded."""
    context = browser.new_context(viewport=VIEWPORT)
    asked: list[str] = []

    def refuse_network(route: Route) -> None:
        if route.request.url.startswith(("http:", "https:")):
            asked.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", refuse_network)
    page = context.new_page()
    page.set_default_timeout(15_000)
    shown = Screen(page=page, watched=watch(page), name=f"report-{report.stem}")
    page.goto(report.as_uri())
    return shown, asked


@pytest.mark.parametrize("which", ["demo", "hostile"])
def test_the_one_file_report_draws_its_charts_from_disk_with_no_network(
    browser: Browser, filled: Filled, which: str
) -> None:
    report = filled.demo_report if which == "demo" else filled.hostile_report
    assert report.is_file(), f"{report.name} was not written"
    screen, asked = _offline(browser, report)
    try:
        page = screen.page
        expect(page.locator(".chart").first).to_be_attached()
        _assert_inert(screen, "", expect_payloads=which == "hostile")
        drawn = page.locator(".chart svg").count()
        assert drawn + page.locator(".chart .chart-empty").count() == page.locator(".chart").count()
        assert drawn >= 3, f"only {drawn} charts drawn"
        assert not asked, f"the report asked the network for {asked}"
        if which == "hostile":
            expect(page.locator("[data-testid=turn] .said", has_text=SCRIPT).first).to_be_attached()
    finally:
        screen.page.context.close()
