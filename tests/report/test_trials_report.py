"""Trials and change marks in report.json, the HTML report and the terminal: the table only
when a scenario ran more than once, the marks of a planted regression, hostile text escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygon_voice.report.files import write_report
from polygon_voice.report.html import render_html_report
from polygon_voice.store import RunRecord, Store
from tests.report.report_store import ONERROR, SCRIPT, open_store, run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, str]]:
    folder = tmp_path_factory.mktemp("trials")
    store = open_store(folder)
    ids = {
        "robust": run(store, "reference:robust", trials=3),
        "flawed": run(store, "reference:flawed", trials=3),
        "once": run(store, "reference:robust"),
    }
    return store, ids


def test_report_json_has_a_trials_section(
    runs: tuple[Store, dict[str, str]], tmp_path: Path
) -> None:
    store, ids = runs
    path = write_report(store, store.get_run(ids["flawed"]), tmp_path / "report.json")
    report = json.loads(path.read_text())
    trials = report["trials"]
    assert trials["ks"] == [1, 2, 4]
    rows = {row["scenario"]: row for row in trials["scenarios"]}
    assert set(rows) == {"corr-01", "corr-04", "int-01", "te-01"}
    for row in rows.values():
        assert row["trials"] == 3
        assert row["pass_hat_k"]["4"] is None  # three trials cannot say anything of four
        passes = sum(
            c["judgement"]["verdict"] == "pass"
            for c in report["conversations"]
            if c["scenario_id"] == row["scenario"]
        )
        assert row["passes"] == passes
        assert row["passed_every_trial"] == (passes == 3)
    assert trials["summary"]["trials"] == 12
    assert [c["trial"] for c in report["conversations"]][:3] == [1, 2, 3]


def test_the_html_report_shows_trials_and_change_marks(
    runs: tuple[Store, dict[str, str]],
) -> None:
    store, ids = runs
    page = render_html_report(store, [ids["robust"], ids["flawed"]])
    assert 'data-testid="trials-table"' in page
    assert 'data-scenario="corr-01"' in page
    assert "judge spread" in page
    assert 'data-testid="changes"' in page
    # 12 pairs, the flawed agent worse on most: the overall mark is a regression.
    assert 'data-scope="overall" data-name="composite" data-mark="regressed"' in page
    # One run without repeats: no trials table.
    single = render_html_report(store, [ids["once"]])
    assert 'data-testid="trials-table"' not in single


def test_hostile_scenario_names_are_escaped_in_the_trials_table(
    runs: tuple[Store, dict[str, str]],
) -> None:
    store, ids = runs
    source = store.get_run(ids["robust"])
    played = list(store.iter_conversations(source.id))[:2]
    record = RunRecord.model_validate({**source.model_dump(), "id": "hostiletrials"})
    store.create_run(record)
    hostile = f"{SCRIPT}{ONERROR}"
    for index, original in enumerate(played):
        data = original.model_dump(mode="json")
        copy = type(original).model_validate(
            {**data, "id": f"{hostile}#{index + 1}", "scenario_id": hostile}
        )
        store.add_conversation(record.id, index, copy)
    page = render_html_report(store, [record.id])
    assert 'data-testid="trials-table"' in page
    assert SCRIPT not in page
    assert ONERROR not in page
    assert "&lt;script&gt;" in page
