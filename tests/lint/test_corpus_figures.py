"""Tiers 1-2 on the held-out and fresh parts of the corpus: the figures must not fall back.

Neither part was used to fit a rule or a threshold (docs/lint.md). The
targets (precision 0.85, recall 0.6 on contradiction and redundancy, 0.1 false positives per
clean prompt) are not all met yet: where one is not, the floor is the measured figure minus
a small margin, and docs/lint.md says plainly which are met.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.lint import lint
from polygon_voice.lint.corpus import Figures, evaluate, load_split

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "lint_corpus"
MARGIN = 0.05
# Measured on each part, tiers 1+2 (docs/lint.md), minus MARGIN where the target is not
# met; the target itself where it is.
FLOORS = {
    "heldout": {
        ("contradiction", "precision"): 0.69 - MARGIN,  # target 0.85: not met (31 of 45)
        ("contradiction", "recall"): 0.56 - MARGIN,  # target 0.6: not met (30 of 54 flaws)
        ("redundancy", "precision"): 0.85,  # target met: 0.87
        ("redundancy", "recall"): 0.6,  # target met: 0.67 (26 of 39 flaws)
    },
    "fresh": {
        ("contradiction", "precision"): 0.63 - MARGIN,  # target 0.85: not met (19 of 30)
        ("contradiction", "recall"): 0.41 - MARGIN,  # target 0.6: not met (18 of 44 flaws)
        ("redundancy", "precision"): 0.80 - MARGIN,  # target 0.85: not met (16 of 20)
        ("redundancy", "recall"): 0.57 - MARGIN,  # target 0.6: not met (16 of 28 flaws)
    },
}
# False-positive findings on clean prompts, contradiction and redundancy only: one on
# heldout's 8, two on fresh's 8 (all contradiction).
CLEAN_FP_CEILING = {"heldout": 1 / 8 + 0.01, "fresh": 2 / 8 + 0.01}
# All axes, at the default confidence cut (the target is 0.1 per clean prompt: not met on
# either; two findings on each part's 8: a contradiction and an ambiguity one on heldout,
# the two contradiction ones on fresh). One finding more fails either.
CLEAN_FP_ALL_AXES_CEILING = {"heldout": 2 / 8 + 0.01, "fresh": 2 / 8 + 0.01}


@pytest.fixture(scope="module", params=sorted(FLOORS))
def part(request: pytest.FixtureRequest) -> tuple[str, Figures]:
    pytest.importorskip("wordfreq")
    prompts = load_split(CORPUS, request.param)
    return request.param, evaluate(prompts, lambda p: lint(p.prompt, max_tier=2, env={}))


@pytest.mark.parametrize(("axis", "what"), sorted(FLOORS["heldout"]))
def test_unseen_figures_do_not_regress(part: tuple[str, Figures], axis: str, what: str) -> None:
    name, figures = part
    value = getattr(figures.axes[axis], what)
    assert value is not None
    assert value >= FLOORS[name][(axis, what)], (name, axis, what, value)


def test_unseen_false_positives_on_clean_prompts_do_not_grow(part: tuple[str, Figures]) -> None:
    name, figures = part
    assert figures.clean_prompts > 0
    fp = sum(figures.clean_findings[a] for a in ("contradiction", "redundancy"))
    assert fp / figures.clean_prompts <= CLEAN_FP_CEILING[name], (name, fp)
    rate = figures.clean_fp_rate
    assert rate is not None
    assert rate <= CLEAN_FP_ALL_AXES_CEILING[name], (name, rate)
