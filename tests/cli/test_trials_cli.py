"""`polygon run --trials K` and `polygon show`: the trials table only when a scenario ran
more than once; bad values refused before anything runs."""

from __future__ import annotations

import json

from tests.cli.conftest import EXAMPLE_SUITE, Polygon


def test_run_and_show_print_the_trials_table(polygon: Polygon) -> None:
    code, out, err = polygon(
        "run", str(EXAMPLE_SUITE), "--trials", "3", "--scenario", "crm-*", "--no-probes"
    )
    assert code == 0, err
    assert "Trials per scenario" in out
    assert "crm-timeout-then-retry" in out
    assert "pass^2" in out
    assert "judge spread" in out
    run_id = out.split("Run ", 1)[1].split(":", 1)[0].strip()
    code, shown, err = polygon("show", run_id)
    assert code == 0, err
    assert "Trials per scenario" in shown
    # Filtered to one scenario, the table holds only that one.
    code, shown, _ = polygon("show", run_id, "--scenario", "crm-down")
    table = shown.split("Trials per scenario", 1)[1]
    assert "crm-down" in table
    assert "crm-timeout-then-retry" not in table


def test_a_run_once_per_scenario_has_no_trials_table(polygon: Polygon) -> None:
    code, out, err = polygon("run", str(EXAMPLE_SUITE), "--scenario", "crm-down", "--no-probes")
    assert code == 0, err
    assert "Trials per scenario" not in out


def test_json_names_each_calls_trial(polygon: Polygon) -> None:
    code, out, err = polygon(
        "run", str(EXAMPLE_SUITE), "--trials", "2", "--scenario", "crm-down", "--json"
    )
    assert code == 0, err
    calls = json.loads(out)["calls"]
    assert [(c["id"], c["trial"]) for c in calls] == [("crm-down#1", 1), ("crm-down#2", 2)]


def test_bad_trials_are_refused_with_exit_2(polygon: Polygon) -> None:
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--trials", "0")
    assert code == 2
    assert "--trials" in err
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--trials", "5000")
    assert code == 2
    assert "repeat limit of 1,000" in err
