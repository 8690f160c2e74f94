"""Leaderboard order (score, stability, speed) with ties; response times; robustness data."""

from __future__ import annotations

from polygon_voice.experiments.curves import curve_conditions, curve_rows
from polygon_voice.experiments.leaderboard import PointScore, mean_response_time, rank_points
from polygon_voice.model.trace import CallEnd, ConversationResult, EndReason, Speaker, Turn
from polygon_voice.report.sweep_charts import robustness_chart


def score(
    index: int,
    composite: float | None,
    stability: float | None,
    speed: float | None,
    **settings: object,
) -> PointScore:
    return PointScore(index, dict(settings), f"run{index}", 10, composite, 0.5, stability, speed)


def test_score_first_then_stability_then_speed_and_ties_share_a_rank() -> None:
    ranked = rank_points(
        [
            score(0, 80.0, 5.0, 1.0),
            score(1, 90.0, 9.0, 3.0),  # best score wins whatever its spread
            score(2, 80.0, 2.0, 9.0),  # same score as 0, steadier: above it
            score(3, 80.04, 5.02, 1.004),  # equal to 0 as shown (0.1, 0.1, 0.01): a tie
            score(4, None, None, None),  # no score: last
            score(5, 80.0, 5.0, 0.5),  # equal score and spread as 0, faster: above it
        ]
    )
    assert [(p.index, p.rank, p.tied) for p in ranked] == [
        (1, 1, False),
        (2, 2, False),
        (5, 3, False),
        (0, 4, True),
        (3, 4, True),
        (4, 6, False),
    ]


def turn(index: int, speaker: Speaker, start: float, end: float) -> Turn:
    return Turn(index=index, speaker=speaker, text="x", heard="x", start=start, end=end)


def test_response_time_is_the_wait_from_a_caller_turn_to_the_next_agent_turn() -> None:
    turns = [
        turn(0, Speaker.AGENT, 0.0, 1.0),  # the greeting answers nobody: not counted
        turn(1, Speaker.CALLER, 1.3, 2.0),
        turn(2, Speaker.AGENT, 2.5, 3.0),  # waited 0.5
        turn(3, Speaker.CALLER, 3.3, 4.0),
        turn(4, Speaker.AGENT, 5.5, 6.0),  # waited 1.5 (a tool call)
    ]
    call = ConversationResult(
        id="c", scenario_id="s", seed=1, language="en",
        end=CallEnd(reason=EndReason.AGENT_HANGUP, time=6.0), turns=turns, tool_calls=[],
        state_updates=[], backend_writes=[], trace=[],
    )  # fmt: skip
    assert mean_response_time([call]) == 1.0
    assert mean_response_time([]) is None


def test_robustness_rows_follow_each_configuration_along_the_condition() -> None:
    points = [
        score(0, 90.0, 1.0, 1.0, temperature=0.2, noise=0.0),
        score(1, 70.0, 1.0, 1.0, temperature=0.2, noise=1.0),
        score(2, 85.0, 1.0, 1.0, temperature=0.8, noise=0.0),
        score(3, 40.0, 1.0, 1.0, temperature=0.8, noise=1.0),
    ]
    assert curve_conditions(points) == ["noise"]
    rows = curve_rows(points, "noise")
    composite = [(r["config"], r["level"], r["value"]) for r in rows if r["measure"] == "composite"]
    assert composite == [
        ("temperature=0.2", 0.0, 90.0),
        ("temperature=0.2", 1.0, 70.0),
        ("temperature=0.8", 0.0, 85.0),
        ("temperature=0.8", 1.0, 40.0),
    ]
    assert {r["value"] for r in rows if r["measure"] == "pass rate %"} == {50.0}
    spec = robustness_chart("noise", rows)
    assert spec["encoding"]["x"]["field"] == "level"
    assert spec["encoding"]["color"]["field"] == "config"
    assert spec["data"]["values"] == rows


def test_a_curve_is_named_by_what_tells_it_apart_not_by_what_every_point_shares() -> None:
    points = [
        score(0, 90.0, 1.0, 1.0, model="fake", top_p=0.9, temperature=0.0, noise=0.0),
        score(1, 60.0, 1.0, 1.0, model="fake", top_p=0.9, temperature=0.0, noise=1.0),
        score(2, 80.0, 1.0, 1.0, model="fake", top_p=0.9, temperature=0.7, noise=0.0),
        score(3, 50.0, 1.0, 1.0, model="fake", top_p=0.9, temperature=0.7, noise=1.0),
    ]
    names = {r["config"] for r in curve_rows(points, "noise")}
    assert names == {"temperature=0.0", "temperature=0.7"}
    one_line = curve_rows(points[:2], "noise")
    assert {r["config"] for r in one_line} == {"base"}
