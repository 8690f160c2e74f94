"""The comparison screen in a real browser: picked from the runs list, divergence, RUB-6."""

from __future__ import annotations

from playwright.sync_api import expect

from polygon_voice.compare.build import compare
from polygon_voice.store.store import Store
from tests.browser.conftest import Filled, Screen


def test_two_runs_picked_in_the_list_are_compared_with_their_divergence_marked(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    page.goto(server + "/")
    for run_id in (filled.flawed, filled.robust):
        page.locator(f"input[name=run][value='{run_id}']").check()
    page.locator("[data-testid=compare-button]").click()
    page.wait_for_url("**/compare?*")
    assert f"run={filled.flawed}" in page.url
    assert f"run={filled.robust}" in page.url
    expect(page.locator("[data-testid=comparison]")).to_be_visible()
    with Store(filled.db_url) as store:
        divergence = compare(store, [filled.flawed, filled.robust])["divergence"]
    parted = [d for d in divergence if d["turn"] is not None]
    assert parted, "the reference agents part somewhere"
    for expected in parted:
        block = page.locator(f"[data-testid=side-by-side][data-scenario='{expected['scenario']}']")
        if not block.count():
            continue  # the screen shows the first calls of some scenarios only
        rule = block.locator("[data-testid=divergence-rule]")
        expect(rule).to_contain_text(expected["rule"])
        expect(block.locator(f".divergence[data-turn='{expected['turn']}']")).to_be_visible()
    shown = page.locator("[data-testid=side-by-side]").count()
    assert shown, "no side-by-side transcript shown"
    for part in ("scorecards", "criteria-compare", "scenario-matrix", "score-changes", "analysis"):
        expect(page.locator(f"[data-testid={part}]")).to_be_visible()
    # The later run against the first: the robust agent improves on the flawed one (the list
    # may put either first); one call per scenario is too few to mark a scenario, and says so.
    changes = page.locator("[data-testid=changes]")
    robust_later = changes.get_attribute("data-after") == filled.robust
    overall = "improved" if robust_later else "regressed"
    expect(changes.locator("tr[data-scope=overall] td.mark")).to_have_text(overall)
    scenario = changes.locator("tr[data-scope=scenario]").first
    expect(scenario.locator("td.mark")).to_have_text("no detectable change")
    expect(scenario).to_contain_text("too few pairs")
    page.locator("[data-testid=side-by-side] .divergence").first.scroll_into_view_if_needed()
    screen.shoot()
    assert not screen.watched.problems()


def test_runs_under_two_rubric_versions_are_refused_with_the_reason(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    page.goto(f"{server}/compare?run={filled.robust}&run={filled.robust_v2}")
    refused = page.locator("[data-testid=compare-refused]")
    expect(refused).to_be_visible()
    # RUB-6: the reason names both versions and which run has which.
    expect(refused).to_contain_text("rubric")
    expect(refused).to_contain_text(f"{filled.robust_v2} (v2)")
    expect(refused).to_contain_text(f"{filled.robust} (v3)")
    expect(page.locator("[data-testid=comparison]")).to_have_count(0)
    expect(page.locator(".chart")).to_have_count(0)
    screen.shoot()
    assert not screen.watched.problems()
