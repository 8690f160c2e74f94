"""The view models of the HTML report and the app agree with report.json and compare.json,
and mark what the viewer promises: noise edits, judge quotes, turns of the axes' evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygon_voice.compare import compare
from polygon_voice.model import EndReason
from polygon_voice.report import write_report
from polygon_voice.report.marks import Segment, find, noise_edits, quotes, segments
from polygon_voice.report.views import (
    ComparisonRefused,
    comparison_view,
    conversation_view,
    iter_conversation_views,
    run_view,
    score_changes,
)
from polygon_voice.store import Store
from tests.report.report_store import SCENARIOS, open_store, run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, str]]:
    store = open_store(tmp_path_factory.mktemp("views"))
    ids = {
        "flawed": run(store, "reference:flawed"),
        "noisy": run(store, "reference:robust", noise=0.4),
        "v2": run(store, "reference:robust", rubric="v2"),
    }
    return store, ids


def report_json(store: Store, run_id: str, tmp_path: Path) -> dict:
    path = write_report(store, store.get_run(run_id), tmp_path / "report.json")
    return json.loads(path.read_text())


@pytest.mark.parametrize("which", ["flawed", "noisy"])
def test_run_view_numbers_are_report_json_numbers(
    runs: tuple[Store, dict[str, str]], which: str, tmp_path: Path
) -> None:
    store, ids = runs
    view = run_view(store, ids[which])
    report = report_json(store, ids[which], tmp_path)
    assert view["summary"] == report["summary"]
    assert view["probes"] == report["probes"]
    tl = view["three_layer"]
    assert tl["report"]["axes"] == report["axes"]
    assert tl["e2e_integrity"] == report["e2e_integrity"]
    assert tl["release_gate"] == report["release_gate"]
    assert [(r["cause"], r["count"], r["cases"]) for r in tl["root_causes"]] == [
        (r["cause"], r["count"], r["cases"]) for r in report["root_causes"]
    ]
    assert {a["axis"]: a["passed"] for a in tl["axes"]} == {
        name: value["passed"] for name, value in report["axes"].items()
    }
    rows = {c["id"]: c for c in view["conversations"]}
    assert list(rows) == [c["id"] for c in report["conversations"]]
    for entry in report["conversations"]:
        assert rows[entry["id"]]["verdict"] == entry["judgement"]["verdict"]
        assert rows[entry["id"]]["composite"] == entry["judgement"]["composite"]
        assert rows[entry["id"]]["wer"] == entry["wer"]
    counted = sum(view["verdicts"].values())
    assert counted == report["summary"]["conversations"] == len(SCENARIOS)
    assert view["composite"]["mean"] == report["summary"]["mean_composite"]


def test_run_view_header_names_the_configuration(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    header = run_view(store, ids["v2"])["header"]
    assert header["run_id"] == ids["v2"]
    assert header["rubric_version"] == "v2"
    assert header["judge"] == "deterministic"
    assert header["seed"] == 1
    assert header["agent"] == "reference:robust"
    assert {"model", "prompt_version", "profile_hash", "judge_repeats"} <= set(header)


def test_fix_list_says_what_each_cause_means(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    causes = run_view(store, ids["flawed"])["three_layer"]["root_causes"]
    assert causes, "the flawed agent fails some case"
    for cause in causes:
        assert cause["what"], cause["cause"]
        assert "\n" not in cause["what"]


def test_conversation_view_marks_noise_edits(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    marked = 0
    for row in run_view(store, ids["noisy"])["conversations"]:
        view = conversation_view(store, ids["noisy"], row["id"])
        for turn in view["turns"]:
            if turn["speaker"] != "caller" or not turn["heard_differs"]:
                continue
            heard = "".join(s["text"] for s in turn["heard"])
            said = "".join(s["text"] for s in turn["said"])
            assert heard != said
            assert any(s["noise"] for s in turn["heard"] + turn["said"])
            marked += 1
    assert marked, "noise 0.4 changes some caller turn"


def test_conversation_view_places_calls_and_marks_quotes(
    runs: tuple[Store, dict[str, str]],
) -> None:
    store, ids = runs
    view = conversation_view(store, ids["flawed"], "corr-01", prefix="p-")
    assert [t["id"] for t in view["turns"]] == [f"p-turn-{t['index']}" for t in view["turns"]]
    calls = [c for t in view["turns"] for c in t["tool_calls"]] + view["unplaced_calls"]
    stored = store.get_conversation(ids["flawed"], "corr-01")
    assert sorted(c["call_id"] for c in calls) == sorted(c.call_id for c in stored.tool_calls)
    for call in calls:
        assert call["history"][0]["status"] == "prepared"
    marks = [(t["index"], s["text"]) for t in view["turns"] for s in t["said"] if s["evidence"]]
    assert marks
    criteria = view["judgement"]["criteria"]
    for index, text in marks:
        quoted = [c["evidence"] for c in criteria if c["turn"] == index]
        assert any(text in evidence for evidence in quoted)
    axes = {row["axis"]: row for row in view["axes"]["rows"]}
    assert axes["captured"]["turn"] is not None
    assert f"turn {axes['captured']['turn']}" in axes["captured"]["why"]


def test_comparison_view_is_compare_plus_changes(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    pair = [ids["flawed"], ids["noisy"]]
    view = comparison_view(store, pair)
    plain = compare(store, pair)
    for key in ("scorecards", "matrix", "divergence", "incomparable", "analysis"):
        assert view[key] == plain[key]
    assert len(view["score_changes"]) == len(SCENARIOS)
    for change in view["score_changes"]:
        a, b = change["cells"][pair[0]], change["cells"][pair[1]]
        expected = round(b["composite"] - a["composite"], 2)
        assert change["deltas"] == {pair[1]: expected}
    parted = [s for s in view["side_by_side"] if s["turn"] is not None]
    for sbs in parted:
        assert [r["index"] for r in sbs["rows"] if r["divergence"]] in ([sbs["turn"]], [])
        assert sbs["rule"] in {"tool_calls", "call_end", "wording", "speaker"}


def test_comparison_refuses_mixed_rubrics_and_unknown_runs(
    runs: tuple[Store, dict[str, str]],
) -> None:
    store, ids = runs
    with pytest.raises(ComparisonRefused, match="rubric versions") as refused:
        comparison_view(store, [ids["flawed"], ids["v2"]])
    assert "v2" in refused.value.reason
    with pytest.raises(ComparisonRefused, match="no run"):
        comparison_view(store, [ids["flawed"], "nosuchrun"])
    with pytest.raises(ComparisonRefused, match="at least two"):
        comparison_view(store, [ids["flawed"]])


def test_score_changes_match_by_scenario_persona_and_repeat() -> None:
    def view(run_id: str, rows: list[tuple[str, str | None, float]]) -> dict:
        return {
            "header": {"run_id": run_id},
            "conversations": [
                {"id": f"{s}#{i}", "scenario_id": s, "persona": p, "composite": c,
                 "verdict": "pass"}
                for i, (s, p, c) in enumerate(rows)
            ],
        }  # fmt: skip

    a = view("A", [("s1", "p1", 50.0), ("s1", "p2", 60.0), ("s1", "p1", 70.0)])
    b = view("B", [("s1", "p2", 65.0), ("s1", "p1", 40.0)])
    changes = {(c["scenario"], c["persona"], c["repeat"]): c for c in score_changes([a, b])}
    assert changes[("s1", "p1", 0)]["deltas"] == {"B": -10.0}
    assert changes[("s1", "p2", 0)]["deltas"] == {"B": 5.0}
    assert changes[("s1", "p1", 1)]["deltas"] == {}
    assert not changes[("s1", "p1", 1)]["complete"]


def test_segments_cut_at_every_mark() -> None:
    parts = segments("abcdef", noise=[(1, 3)], evidence=[(2, 5)])
    assert parts == [
        Segment("a"),
        Segment("b", noise=True),
        Segment("c", noise=True, evidence=True),
        Segment("de", evidence=True),
        Segment("f"),
    ]
    assert segments("") == []


def test_noise_edits_are_word_spans() -> None:
    said, heard = noise_edits("Order 5590, please.", "Um, order five five nine oh, please")
    assert [("Order 5590, please."[s:e]) for s, e in said] == ["5590,"]
    texts = ["Um, order five five nine oh, please"[s:e] for s, e in heard]
    assert texts == ["Um,", "five", "five", "nine", "oh,"]
    assert noise_edits("same words.", "Same words") == ([], [])


def test_quotes_prefer_the_whole_quote_and_find_only_what_occurs() -> None:
    line = 'turn 2 (agent): "He said "yes" twice"; more'
    assert quotes(line)[0] == 'He said "yes" twice'
    assert find('Well. He said "yes" twice.', quotes(line)[0]) == (6, 25)
    assert find("nothing like it", "absent") is None
    assert quotes("no evidence") == ["no evidence"]


def test_streamed_viewers_equal_the_single_viewer(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    streamed = list(iter_conversation_views(store, ids["noisy"], prefixed=False))
    assert [v["id"] for v in streamed] == [s.id for s in store.iter_summaries(ids["noisy"])]
    for view in streamed:
        assert view == conversation_view(store, ids["noisy"], view["id"])
    assert all(v["axes"] is not None and v["judgement"] is not None for v in streamed)


def test_a_model_judges_quote_is_marked_only_where_it_occurs() -> None:
    from polygon_voice.report.views import _evidence_spans
    from tests.report.test_files import result

    played = result("c#1", EndReason.AGENT_HANGUP, 3)  # three agent turns saying "hi"
    criteria = {
        "found": {"evidence": "HI", "turn": None, "evidence_found": True},
        "not_checked": {"evidence": "hi", "turn": None, "evidence_found": None},
        "elsewhere": {"evidence": 'turn 2 (agent): "bye"', "turn": 2},
        "named": {"evidence": 'turn 1 (agent): "hi"', "turn": 1},
    }
    assert _evidence_spans(played, criteria) == {0: [(0, 2)], 1: [(0, 2)]}
