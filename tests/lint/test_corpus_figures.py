"""Tiers 1-2 on the held-out part of the corpus: the figures must not fall back.

The held-out part was never used to fit a rule or a threshold (docs/lint.md). The
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
# Measured on the held-out part, tiers 1+2 (docs/lint.md), minus MARGIN where the target
# is not met; the target itself where it is.
FLOORS = {
    ("contradiction", "precision"): 0.82 - MARGIN,  # target 0.85: not met
    ("contradiction", "recall"): 0.43 - MARGIN,  # target 0.6: not met
    ("redundancy", "precision"): 0.85,  # target met: 0.86
    ("redundancy", "recall"): 0.59 - MARGIN,  # target 0.6: not met (23 of 39 flaws)
}
# False-positive findings on clean prompts, contradiction and redundancy only (none).
CLEAN_FP_CEILING = 0.0 + MARGIN
# All axes, at the default confidence cut (the target is 0.1 per clean prompt: not met, one
# finding on 8 clean prompts). One finding more fails.
CLEAN_FP_ALL_AXES_CEILING = 1 / 8 + 0.01


@pytest.fixture(scope="module")
def heldout() -> Figures:
    pytest.importorskip("wordfreq")
    prompts = load_split(CORPUS, "heldout")
    return evaluate(prompts, lambda p: lint(p.prompt, max_tier=2, env={}))


@pytest.mark.parametrize(("axis", "what"), sorted(FLOORS))
def test_heldout_figures_do_not_regress(heldout: Figures, axis: str, what: str) -> None:
    value = getattr(heldout.axes[axis], what)
    assert value is not None
    assert value >= FLOORS[(axis, what)], (axis, what, value)


def test_heldout_false_positives_on_clean_prompts_do_not_grow(heldout: Figures) -> None:
    assert heldout.clean_prompts > 0
    fp = sum(heldout.clean_findings[a] for a in ("contradiction", "redundancy"))
    assert fp / heldout.clean_prompts <= CLEAN_FP_CEILING
    rate = heldout.clean_fp_rate
    assert rate is not None
    assert rate <= CLEAN_FP_ALL_AXES_CEILING
