"""The app's pages over real runs: runs list and filters, run page, viewer, comparison, errors."""

from __future__ import annotations

from collections import Counter
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from polygon_voice.store import Store
from polygon_voice.web.app import create_app
from polygon_voice.web.settings import WebSettings
from tests.web.conftest import BASE_URL, Stored
from tests.web.dom import Element, parse

RUN_PARTS = (
    "run-header",
    "verdict-counts",
    "criteria-table",
    "axes-table",
    "root-causes",
    "release-gate",
    "probes-table",
    "conversation-list",
)


def page(client: TestClient, url: str, status: int = 200) -> Element:
    response = client.get(url)
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("text/html")
    return parse(response.text)


def shown_runs(doc: Element) -> list[str]:
    table = doc.testid("runs-table")
    return [row.attrs["data-run"] for row in table.all("tr", data_run="*")]


def words(element: Element) -> str:
    return " ".join(element.text.split())


def rows_of(table: Element) -> list[list[str]]:
    """The table's body rows, each the words of its cells."""
    return [[words(cell) for cell in row.all("td")] for row in table.all("tr") if row.all("td")]


def test_the_runs_list_shows_every_run_with_a_checkbox_and_a_link(
    client: TestClient, stored: Stored
) -> None:
    doc = page(client, "/")
    with Store(stored.db_url) as store:
        expected = [run.id for run in store.list_runs()]
        counts = {run.id: run.conversation_count for run in store.list_runs()}
    assert shown_runs(doc) == expected  # newest first, as the store lists them
    for run_id in expected:
        doc.one("input", type="checkbox", name="run", value=run_id)
        row = doc.one("tr", data_run=run_id)
        assert row.one("a", href=f"/runs/{run_id}")
        assert str(counts[run_id]) in [words(cell) for cell in row.all("td")]
    form = doc.testid("run-filters")
    assert form.attrs["method"] == "get"
    assert {el.attrs["name"] for el in form.all("select")} == {"agent", "suite", "status", "rubric"}
    button = doc.testid("compare-button")
    compare_form = next(el for el in doc.all("form") if button in list(el.iter()))
    assert compare_form.attrs["action"] == "/compare"
    assert compare_form.attrs["method"] == "get"


def test_filters_filter_the_runs(client: TestClient, stored: Stored) -> None:
    robust = shown_runs(page(client, "/?agent=reference:robust"))
    assert set(robust) == {stored.robust, stored.robust_v2, stored.hostile}
    robust = shown_runs(page(client, "/?agent=reference:robust&suite=three-layer"))
    assert set(robust) == {stored.robust, stored.robust_v2}
    v2 = shown_runs(page(client, "/?rubric=v2"))
    assert v2 == [stored.robust_v2]
    both = shown_runs(page(client, "/?agent=reference:robust&rubric=v3&suite=three-layer"))
    assert both == [stored.robust]
    doc = page(client, "/?status=interrupted")
    assert not doc.all(data_testid="runs-table")
    assert "No run matches these filters." in doc.text
    # The chosen value stays selected, so the user sees what is filtered.
    selected = page(client, "/?rubric=v2").testid("run-filters").one("option", selected="")
    assert selected.attrs["value"] == "v2"


def test_the_run_page_shows_every_part_with_the_stored_numbers(
    client: TestClient, stored: Stored
) -> None:
    doc = page(client, f"/runs/{stored.flawed}")
    for part in RUN_PARTS:
        doc.testid(part)
    assert stored.flawed in doc.testid("run-header").text
    with Store(stored.db_url) as store:
        verdicts = Counter(
            j["verdict"] for _, j in store.iter_stage_results(stored.flawed, "judge")
        )
        summaries = list(store.iter_summaries(stored.flawed))
    counts = doc.testid("verdict-counts")
    for verdict in ("pass", "fail"):
        assert words(counts.one("td", data_verdict=verdict)) == str(verdicts[verdict])
    assert verdicts["pass"] + verdicts["fail"] == len(summaries)
    rows = doc.testid("conversation-list").all(data_testid="conversation-row")
    assert [row.attrs["data-conversation"] for row in rows] == [s.id for s in summaries]
    for row, summary in zip(rows, summaries, strict=True):
        row.one("a", href=f"/runs/{stored.flawed}/conversations/{summary.id}")
    # The published three-layer table of the flawed agent: 24 of 30 captured, 7 confirmed.
    axes = rows_of(doc.testid("axes-table"))
    assert ["captured", "24", "30"] in axes
    assert ["confirmation_matches_backend", "7", "30"] in axes
    assert "fail" in words(doc.testid("release-gate")).lower()
    for name in ("composite", "criteria", "probes"):
        chart = doc.one("div", cls="chart", data_chart=name)
        spec = chart.parent.one("script", type="application/json") if chart.parent else None
        assert spec is not None
        assert spec.text.startswith("{")
    scripts = [el.attrs["src"] for el in doc.all("script", src="*")]
    assert "/static/charts.js" in scripts
    for src in scripts:
        assert client.get(src).status_code == 200, src


def test_the_viewer_shows_the_call_turn_by_turn_with_its_tool_calls(
    client: TestClient, stored: Stored
) -> None:
    with Store(stored.db_url) as store:
        call = next(
            store.get_conversation(stored.flawed, s.id)
            for s in store.iter_summaries(stored.flawed)
            if s.tool_call_count
        )
    doc = page(client, f"/runs/{stored.flawed}/conversations/{call.id}")
    root = doc.one(data_testid="conversation", data_conversation=call.id)
    turns = root.all(data_testid="turn")
    assert len(turns) == len(call.turns)
    for element, turn in zip(turns, call.turns, strict=True):
        assert element.attrs["data-speaker"] == turn.speaker.value
        assert element.attrs["id"] == f"turn-{element.attrs['data-turn']}"
        said = element.one(cls="said")
        assert " ".join(turn.text.split()) in words(said)
        if turn.speaker.value == "caller":
            element.one(cls="heard")
    tools = root.all(data_testid="tool-call")
    assert [t.attrs["data-call-id"] for t in tools] == [c.call_id for c in call.tool_calls]
    first = tools[0]
    assert first.all(cls="lifecycle")
    assert first.all(data_status="prepared")
    assert call.tool_calls[0].tool in first.text
    root.testid("axes")
    assert doc.all("a", href=f"/runs/{stored.flawed}")  # back to its run


def test_a_comparison_of_two_runs_shows_every_part(client: TestClient, stored: Stored) -> None:
    doc = page(client, f"/compare?run={stored.flawed}&run={stored.robust}")
    doc.testid("comparison")
    for part in ("scorecards", "criteria-compare", "scenario-matrix", "score-changes", "analysis"):
        doc.testid(part)
    cards = words(doc.testid("scorecards"))
    assert stored.flawed in cards
    assert stored.robust in cards
    assert doc.all(data_testid="side-by-side")
    assert not doc.all(data_testid="compare-refused")


def test_a_comparison_across_rubric_versions_is_refused_with_the_reason(
    client: TestClient, stored: Stored
) -> None:
    doc = page(client, f"/compare?run={stored.robust}&run={stored.robust_v2}", status=409)
    refused = words(doc.testid("compare-refused"))
    assert "RUB-6" in refused
    assert "v2" in refused
    assert "v3" in refused
    assert not doc.all(data_testid="comparison")


def test_the_compare_button_sends_the_ticked_runs(client: TestClient, stored: Stored) -> None:
    # What the form submits: GET /compare with one `run` per ticked box.
    query = f"run={stored.flawed}&run={stored.robust}"
    assert parse_qs(urlsplit(f"/compare?{query}").query)["run"] == [stored.flawed, stored.robust]
    by_prefix = page(client, f"/compare?run={stored.flawed[:8]}&run={stored.robust}")
    assert stored.flawed in words(by_prefix.testid("scorecards"))


def test_one_run_is_not_a_comparison(client: TestClient, stored: Stored) -> None:
    doc = page(client, f"/compare?run={stored.flawed}", status=409)
    assert doc.testid("compare-refused").text.strip()
    page(client, "/compare", status=409)


def test_unknown_ids_get_a_404_page_that_says_what_is_missing(
    client: TestClient, stored: Stored
) -> None:
    doc = page(client, "/runs/nosuchrun", status=404)
    assert "nosuchrun" in doc.testid("message").text
    doc = page(client, f"/runs/{stored.flawed}/conversations/nosuchcall", status=404)
    assert "nosuchcall" in doc.testid("message").text
    doc = page(client, f"/compare?run={stored.flawed}&run=nosuchrun", status=404)
    assert "nosuchrun" in doc.testid("message").text
    doc = page(client, "/personas/p-nosuch", status=404)
    assert "p-nosuch" in doc.testid("message").text
    page(client, "/no/such/page", status=404)


def test_a_judgement_set_the_run_does_not_have_is_a_404_not_an_unjudged_run(
    client: TestClient, stored: Stored
) -> None:
    with Store(stored.db_url) as store:
        call = next(iter(store.iter_summaries(stored.flawed))).id
    for url in (
        f"/runs/{stored.flawed}?set=mistyped",
        f"/runs/{stored.flawed}/conversations/{call}?set=mistyped",
        f"/compare?run={stored.flawed}&run={stored.robust}&set=mistyped",
    ):
        message = page(client, url, status=404).testid("message").text
        assert "no judgement set 'mistyped'" in message, url
    page(client, f"/runs/{stored.flawed}?set=")  # empty: the run's own


def test_an_unreachable_database_gets_a_clear_page_not_a_traceback(
    stored: Stored,
) -> None:
    missing = stored.root / "no-such-folder" / "deeper" / "polygon.db"
    settings = WebSettings(db_url=f"sqlite:///{missing}")
    with TestClient(create_app(settings), base_url=BASE_URL) as client:
        response = client.get("/")
    assert response.status_code == 503
    doc = parse(response.text)
    message = doc.testid("message").text
    assert "cannot open the results database" in message
    assert "Traceback" not in response.text


def test_a_failure_inside_a_page_is_a_plain_500_with_the_headers(
    stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> None:
        raise RuntimeError("secret internals at /srv/db")

    monkeypatch.setattr("polygon_voice.report.views.run_view", broken)
    app = create_app(stored.settings())
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as client:
        response = client.get(f"/runs/{stored.flawed}")
    assert response.status_code == 500
    assert "Internal error" in parse(response.text).testid("message").text
    assert "secret internals" not in response.text
    assert "Traceback" not in response.text
    assert response.headers["content-security-policy"].startswith("default-src 'none'")
    assert response.headers["x-content-type-options"] == "nosniff"
