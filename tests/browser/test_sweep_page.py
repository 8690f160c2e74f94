"""The sweep page in a real browser: the leaderboard as stored, ties marked, the curve drawn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Filled, Screen, polygon

SWEEP = """\
name: browser-noise
base: {agent: "reference:flawed"}
suite: three-layer
scenarios: ["te-0[1-2]", "int-01"]
vary:
  noise: {range: {from: 0, to: 1, steps: 3}}
"""


@pytest.fixture(scope="module")
def swept(filled: Filled) -> dict[str, object]:
    """A sweep stored in the browser tests' database; its `sweep show --json` document."""
    path: Path = filled.folder / "sweep.yaml"
    path.write_text(SWEEP, encoding="utf-8")
    out = polygon("sweep", path, "--db", filled.db_url, "--json", cwd=filled.folder)
    document: dict[str, object] = json.loads(out)
    return document


def test_the_sweep_page_shows_the_ranked_points_and_draws_the_noise_curve(
    server: str, swept: dict[str, object], screen: Screen
) -> None:
    page = screen.page
    info = swept["sweep"]
    assert isinstance(info, dict)
    page.goto(f"{server}/sweeps")  # the list, then the sweep's link, as a user goes
    page.locator(f"[data-testid=sweeps-table] [data-sweep='{info['id']}'] a").click()
    page.wait_for_url(f"**/sweeps/{info['id']}")
    expect(page.locator("[data-testid=sweep-status]")).to_contain_text("finished")
    rows = page.locator("[data-testid=leaderboard-row]")
    board = swept["leaderboard"]
    assert isinstance(board, list)
    expect(rows).to_have_count(len(board))
    shown = rows.evaluate_all("rows => rows.map(r => [r.dataset.point, r.dataset.rank])")
    assert shown == [[str(p["point"]), str(p["rank"])] for p in board]
    for row, point in zip(rows.all(), board, strict=True):
        composite = f"{point['mean_composite']:.1f}"
        expect(row.locator("td").nth(3)).to_have_text(composite)
        if point["tied"]:
            expect(row.locator("td").first).to_contain_text("(tie)")
        link = row.locator("a")
        expect(link).to_have_attribute("href", f"/runs/{point['run_id']}")
    chart = page.locator(".chart[data-chart=robustness-1]")
    expect(chart.locator("svg").first).to_be_attached()
    spec = json.loads(chart.locator("xpath=following-sibling::script[1]").text_content() or "")
    assert spec["encoding"]["x"]["title"] == "noise"
    assert {row["level"] for row in spec["data"]["values"]} == {0.0, 0.5, 1.0}
    screen.shoot()
    assert not screen.watched.problems()


def test_an_unknown_sweep_is_a_404_page(server: str, screen: Screen) -> None:
    response = screen.page.goto(f"{server}/sweeps/sw-000000000000")
    assert response is not None
    assert response.status == 404
    assert re.search("no sweep", screen.page.content())
