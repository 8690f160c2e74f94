"""The example sweeps load, and the prompt-agent one runs against the fake server with the
script it ships with (as docs/experiments.md walks through it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.api import open_store
from polygon_voice.experiments.curves import curve_rows
from polygon_voice.experiments.leaderboard import PointScore
from polygon_voice.experiments.points import sweep_points
from polygon_voice.experiments.sweep import SweepOptions, SweepResult, run_sweep
from polygon_voice.experiments.sweep_file import load_sweep
from polygon_voice.testing import FakeLLMServer
from polygon_voice.testing.script import load_script

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sweeps"


def test_the_noise_curve_example_is_a_five_by_two_grid() -> None:
    loaded = load_sweep(EXAMPLES / "noise_curve.yaml")
    assert len(sweep_points(loaded.sweep, {})) == 10


@pytest.fixture(scope="module")
def temperature_noise(tmp_path_factory: pytest.TempPathFactory) -> tuple[SweepResult, set[object]]:
    """The worked example's sweep, played as docs/experiments.md walks through it, and the
    temperatures the fake server was sent."""
    folder = tmp_path_factory.mktemp("sweep")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        with FakeLLMServer(load_script(EXAMPLES / "fake_agent.yaml")) as server:
            patch.setenv("POLYGON_AGENT_MODEL", "fake")
            patch.setenv("POLYGON_AGENT_BASE_URL", server.base_url)
            with open_store(str(folder / "e.db")) as store:
                result = run_sweep(
                    load_sweep(EXAMPLES / "temperature_noise.yaml"), store, SweepOptions()
                )
            temperatures = {r.body.get("temperature") for r in server.requests}
    return result, temperatures


def point_at(result: SweepResult, temperature: float, noise: float) -> PointScore:
    settings = {"temperature": temperature, "noise": noise}
    (point,) = [p for p in result.leaderboard if settings.items() <= p.settings.items()]
    return point


def figures(point: PointScore) -> tuple[int, float, float]:
    """A scored point's rank, pass rate and mean composite."""
    assert point.rank is not None
    assert point.pass_rate is not None
    assert point.mean_composite is not None
    return point.rank, point.pass_rate, point.mean_composite


def test_the_temperature_noise_example_runs_every_point(
    temperature_noise: tuple[SweepResult, set[object]],
) -> None:
    result, temperatures = temperature_noise
    assert result.status == "finished"
    assert [o.status for o in result.outcomes] == ["done"] * 6
    assert temperatures == {0.0, 0.7}
    assert [p.calls for p in result.leaderboard] == [8] * 6


def test_the_cool_agent_completes_the_task_when_it_hears_the_caller(
    temperature_noise: tuple[SweepResult, set[object]],
) -> None:
    _, pass_rate, composite = figures(point_at(temperature_noise[0], 0.0, 0.0))
    assert pass_rate == 1.0
    assert composite > 90


def test_noise_lowers_the_pass_rate_and_the_composite(
    temperature_noise: tuple[SweepResult, set[object]],
) -> None:
    for temperature in (0.0, 0.7):
        curve = [figures(point_at(temperature_noise[0], temperature, noise))
                 for noise in (0.0, 0.5, 1.0)]  # fmt: skip
        rates = [rate for _, rate, _ in curve]
        composites = [composite for _, _, composite in curve]
        assert rates == sorted(rates, reverse=True)
        assert rates[0] > rates[2]
        assert composites == sorted(composites, reverse=True)
        assert composites[0] > composites[2]


def test_temperature_0_ranks_above_temperature_0_7_wherever_the_agent_hears_enough(
    temperature_noise: tuple[SweepResult, set[object]],
) -> None:
    result = temperature_noise[0]
    cool_rank, cool_rate, _ = figures(point_at(result, 0.0, 0.0))
    hot_rank, hot_rate, _ = figures(point_at(result, 0.7, 0.0))
    assert cool_rank < hot_rank
    assert cool_rate > hot_rate
    for noise in (0.5, 1.0):  # at full noise neither hears a number: they may tie
        assert figures(point_at(result, 0.0, noise))[0] <= figures(point_at(result, 0.7, noise))[0]


def test_the_example_s_curve_has_a_line_per_temperature(
    temperature_noise: tuple[SweepResult, set[object]],
) -> None:
    rows = curve_rows(temperature_noise[0].leaderboard, "noise")
    assert {(r["measure"], r["level"]) for r in rows} == {
        (measure, level) for measure in ("composite", "pass rate %") for level in (0.0, 0.5, 1.0)
    }
    assert len({r["config"] for r in rows}) == 2
