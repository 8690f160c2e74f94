"""The personas browser in a real browser: filters, a persona's calls, marking it unrealistic."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from polygon_voice.store.store import Store
from tests.browser.conftest import Filled, Screen


def _listed(page: Page) -> list[str]:
    rows = page.locator("[data-testid=personas-table] [data-testid=persona-row]")
    found: list[str] = rows.evaluate_all("rows => rows.map(r => r.dataset.persona)")
    return found


def test_personas_filter_by_type_and_open_the_calls_they_played(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    with Store(filled.db_url) as store:
        stored = store.list_personas()
        first = store.get_persona(filled.personas[0])
    page.goto(server + "/personas")
    assert sorted(_listed(page)) == sorted(record.id for record in stored)
    screen.shoot()
    same_type = [record.id for record in stored if record.persona.type == first.persona.type]
    page.locator("form[data-testid=persona-filters] select[name=type]").select_option(
        first.persona.type.value
    )
    page.locator("form[data-testid=persona-filters] [type=submit]").click()
    page.wait_for_url("**/personas?*type=*")
    assert sorted(_listed(page)) == sorted(same_type)

    # The first persona played a scenario of the hostile suite: its page links to that call.
    page.goto(f"{server}/personas/{first.id}")
    played = page.locator("[data-testid=persona-conversation]")
    expect(played).to_have_count(1)
    expect(played).to_have_attribute("data-run", filled.hostile)
    conversation = played.get_attribute("data-conversation")
    played.locator("a[href*='/conversations/']").click()
    page.wait_for_url(f"**/runs/{filled.hostile}/conversations/*")
    shown = page.locator("[data-testid=conversation]")
    expect(shown).to_have_attribute("data-conversation", str(conversation))
    assert not screen.watched.problems()


def test_a_persona_marked_unrealistic_shows_a_badge_and_the_filter_lists_it(
    server: str, filled: Filled, screen: Screen
) -> None:
    page = screen.page
    marked = filled.personas[-1]
    page.goto(f"{server}/personas/{marked}")
    expect(page.locator("[data-testid=unrealistic-badge]")).to_have_count(0)
    page.locator("[data-testid=mark-unrealistic]").click()
    page.wait_for_load_state()
    expect(page.locator("[data-testid=unrealistic-badge]")).to_be_visible()
    screen.shoot()
    with Store(filled.db_url) as store:
        assert store.get_persona(marked).unrealistic is True
    page.goto(server + "/personas?realism=unrealistic")
    assert _listed(page) == [marked]
    page.goto(server + "/personas?realism=realistic")
    with Store(filled.db_url) as store:
        others = sorted(record.id for record in store.list_personas() if record.id != marked)
    assert sorted(_listed(page)) == others
    assert not screen.watched.problems()
