"""bench/noise.py runs and its figures are sane (a check of the benchmark, not a timed test)."""

from __future__ import annotations

from bench.noise import (
    UTTERANCES,
    measure_load,
    measure_throughput,
    report,
)


def test_every_language_has_short_utterances_with_numbers() -> None:
    assert set(UTTERANCES) == {"en", "de", "hr", "ru"}
    for texts in UTTERANCES.values():
        assert all(2 <= len(text.split()) <= 7 for text in texts)
        assert any(any(c.isdigit() for c in text) for text in texts)


def test_throughput_is_measured_for_each_kind() -> None:
    runs = [
        measure_throughput("hr", 1.0, 200, kind) for kind in ("distorted", "distort", "fresh words")
    ]
    assert [run.kind for run in runs] == ["distorted", "distort", "fresh words"]
    assert all(run.utterances == 200 and run.per_second > 0 for run in runs)


def test_the_load_cost_is_measured_in_a_fresh_process() -> None:
    load = measure_load("hr")
    assert load.language == "hr"
    assert 0 < load.import_s < load.first_utterance_s
    assert load.peak_added_mib >= 0
    assert load.kept_mib > 0
    text = report([load], [measure_throughput("hr", 0.5, 50)], cpu=None)
    assert "hr" in text
    assert "utterances/s" in text
