"""Sweep files: every mistake is one line naming the file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.experiments.sweep_file import load_sweep, varied
from polygon_voice.scenario import SuiteError

GOOD = """\
name: t-sweep
base:
  agent: reference:robust
suite: three-layer
scenarios: ["te-*"]
vary:
  noise: {range: {from: 0, to: 1, steps: 3}}
  difficulty: {values: [1, 3, 5]}
strategy: grid
trials: 2
floor: {composite: 50}
token_limit: 1000
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> SuiteError:
    with pytest.raises(SuiteError) as caught:
        load_sweep(write(tmp_path, text))
    return caught.value


def test_a_good_file_loads_with_its_parameters_in_file_order(tmp_path: Path) -> None:
    loaded = load_sweep(write(tmp_path, GOOD))
    assert loaded.sweep.trials == 2
    assert list(varied(loaded.sweep.vary)) == ["noise", "difficulty"]
    assert loaded.base_dir == tmp_path.resolve()


def test_a_misspelt_parameter_names_its_line_and_the_right_name(tmp_path: Path) -> None:
    error = error_of(tmp_path, GOOD.replace("  difficulty:", "  dificulty:"))
    assert error.line == 8
    assert "dificulty" in str(error)
    assert "difficulty" in str(error)


def test_a_value_out_of_bounds_names_its_list_item(tmp_path: Path) -> None:
    error = error_of(tmp_path, GOOD.replace("[1, 3, 5]", "[1, 3, 9]"))
    assert error.line == 8
    assert error.field is not None
    assert "difficulty" in error.field
    assert "5" in error.message  # the bound it breaks


def test_a_range_of_persona_types_is_refused_at_its_line(tmp_path: Path) -> None:
    text = GOOD.replace(
        "  difficulty: {values: [1, 3, 5]}",
        "  persona_type: {range: {from: busy, to: chatty, steps: 2}}",
    )
    error = error_of(tmp_path, text)
    assert (error.line, error.field) == (8, "vary.persona_type.range")
    assert "needs numbers" in error.message


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (("strategy: grid", "strategy: random"), "strategy", "points"),
        (("strategy: grid", "strategy: grid\npoints: 3"), "points", "random"),
        (
            (
                "vary:\n  noise: {range: {from: 0, to: 1, steps: 3}}\n"
                "  difficulty: {values: [1, 3, 5]}",
                "vary:\n  temperature: {values: [0.1, 0.9]}",
            ),
            "base.agent",
            "prompt agent",
        ),
        (("steps: 3", "steps: 1"), "vary.noise.range.steps", "greater than or equal to 2"),
        (("{composite: 50}", "{composite: 50, pass_rate: 0.5}"), "floor", "exactly one"),
    ],
)
def test_cross_field_mistakes_are_named(
    tmp_path: Path, change: tuple[str, str], field: str, words: str
) -> None:
    error = error_of(tmp_path, GOOD.replace(*change))
    assert error.field == field, str(error)
    assert words in error.message
    assert error.line is not None


def test_a_file_that_is_not_a_mapping_says_what_a_sweep_file_is(tmp_path: Path) -> None:
    error = error_of(tmp_path, "- just\n- a list\n")
    assert "a sweep file is a mapping" in str(error)
