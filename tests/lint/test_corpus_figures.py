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
        ("contradiction", "precision"): 0.76 - MARGIN,  # target 0.85: not met
        ("contradiction", "recall"): 0.50 - MARGIN,  # target 0.6: not met (27 of 54 flaws)
        ("redundancy", "precision"): 0.85,  # target met: 0.86
        ("redundancy", "recall"): 0.6,  # target met: 0.62 (24 of 39 flaws)
    },
    "fresh": {
        ("contradiction", "precision"): 0.78 - MARGIN,  # target 0.85: not met (7 of 9)
        ("contradiction", "recall"): 0.16 - MARGIN,  # target 0.6: not met (7 of 44 flaws)
        ("redundancy", "precision"): 0.85,  # target met: 1.00 (10 of 10)
        ("redundancy", "recall"): 0.36 - MARGIN,  # target 0.6: not met (10 of 28 flaws)
    },
}
# False-positive findings on clean prompts, contradiction and redundancy only: none on
# heldout's 8, one contradiction finding on fresh's 8.
CLEAN_FP_CEILING = {"heldout": 0.0 + MARGIN, "fresh": 1 / 8 + 0.01}
# All axes, at the default confidence cut (the target is 0.1 per clean prompt: not met on
# either, one finding on each part's 8: an ambiguity one on heldout, the contradiction on
# fresh). One finding more fails either.
CLEAN_FP_ALL_AXES_CEILING = {"heldout": 1 / 8 + 0.01, "fresh": 1 / 8 + 0.01}


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
