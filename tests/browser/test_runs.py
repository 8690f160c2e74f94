"""The runs list and a run's page in a real browser: filters, charts, the store's numbers."""

from __future__ import annotations

import json
from collections import Counter

from playwright.sync_api import expect

from polygon_voice.store.store import Store
from tests.browser.conftest import Filled, Screen

CHARTS = ("composite", "criteria", "probes", "repeats")


def test_the_runs_list_shows_every_stored_run_and_filters_by_rubric(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    page.goto(server + "/")
    rows = page.locator("[data-testid=runs-table] [data-run]")
    shown = set(rows.evaluate_all("rows => rows.map(r => r.dataset.run)"))
    assert {filled.flawed, filled.robust, filled.robust_v2, filled.hostile} <= shown
    screen.shoot()
    filters = page.locator("form[data-testid=run-filters]")
    filters.locator("select[name=rubric]").select_option("v2")
    filters.locator("[type=submit]").click()
    page.wait_for_url("**/?*rubric=v2*")
    shown_v2 = rows.evaluate_all("rows => rows.map(r => r.dataset.run)")
    assert shown_v2 == [filled.robust_v2]
    assert not screen.watched.problems()


def test_a_run_page_draws_its_charts_and_shows_the_stored_numbers(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    page.goto(f"{server}/runs/{filled.flawed}")
    expect(page.locator("[data-testid=run-header]")).to_contain_text(filled.flawed)
    for name in CHARTS:
        chart = page.locator(f".chart[data-chart={name}]").first
        spec = json.loads(chart.locator("xpath=following-sibling::script[1]").text_content() or "")
        if spec.get("data", {}).get("values") == []:
            expect(chart.locator(".chart-empty")).to_be_visible()  # said, not drawn empty
        else:
            # vega-embed draws into the element: an svg appears once the chart rendered.
            expect(chart.locator("svg").first).to_be_attached()
    drawn = page.locator(".chart svg").count()
    assert drawn >= 3, f"only {drawn} charts drawn"
    with Store(filled.db_url) as store:
        judged = [data for _, data in store.iter_stage_results(filled.flawed, "judge")]
        conversations = store.conversation_ids(filled.flawed)
    verdicts = Counter(data["verdict"] for data in judged)
    counts = page.locator("[data-testid=verdict-counts]")
    for verdict, count in verdicts.items():
        expect(counts.locator(f"[data-verdict={verdict}]")).to_have_text(str(count))
    mean = sum(data["composite"] for data in judged) / len(judged)
    assert f"{mean:.1f}" in counts.inner_text()
    for name in judged[0]["criteria"]:
        scores = [
            data["criteria"][name]["score"]
            for data in judged
            if data["criteria"][name]["status"] == "scored"
        ]
        row = page.locator(f"[data-testid=criteria-table] [data-criterion={name}]")
        expect(row.locator("td").nth(1)).to_have_text(f"{sum(scores) / len(scores):.2f}")
        expect(row.locator("td").nth(2)).to_have_text(str(len(scores)))
    rows = page.locator("[data-testid=conversation-list] [data-testid=conversation-row]")
    assert set(rows.evaluate_all("rows => rows.map(r => r.dataset.conversation)")) == conversations
    for section in ("criteria-table", "axes-table", "root-causes", "release-gate", "probes-table"):
        expect(page.locator(f"[data-testid={section}]")).to_be_visible()
    screen.shoot()
    assert not screen.watched.problems()
