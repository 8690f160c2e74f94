"""The outcome verdict on tau-bench's published airline trajectories agrees with tau-bench's
own labels (issue target: at least 45 of 50). The labels are kept as metadata and never read
by the judging; the figure and every disagreement are in docs/import-research.md."""

from __future__ import annotations

import pytest
from bench.taubench_agreement import DEFAULT_FILE, TARGET, Agreement, measure


@pytest.fixture(scope="module")
def agreement() -> Agreement:
    if not DEFAULT_FILE.is_file():
        pytest.skip("../shared/data is absent: the tau-bench trajectories are not on this machine")
    return measure(DEFAULT_FILE)


def test_every_call_is_judged_with_its_gold_expectation(agreement: Agreement) -> None:
    assert len(agreement.calls) == 50
    assert all(call.met is not None for call in agreement.calls)
    assert all(call.verdict in ("pass", "warn", "fail", "unscored") for call in agreement.calls)
    assert sum(call.label for call in agreement.calls) == 21  # the file's own count


def test_the_outcome_verdict_agrees_with_the_labels(agreement: Agreement) -> None:
    assert agreement.outcome >= TARGET, [c for c in agreement.calls if not c.outcome_agrees]


def test_the_judges_verdict_agrees_with_the_labels(agreement: Agreement) -> None:
    # A pass needs the expectation met and nothing else failing; a labelled failure must
    # never pass, whatever else the call did well.
    assert agreement.verdict >= TARGET
    false_passes = [c for c in agreement.calls if c.verdict == "pass" and not c.label]
    assert false_passes == []
