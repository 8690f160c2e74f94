"""How often each kind of finding is right, and the cut under which it is not reported.

A finding's confidence is the precision of its kind on the corpus's dev part
(bench/lint_corpus/dev/, `bench/lint.py --calibrate`): of the places that rule marked there,
the share a reviewer had marked too, smoothed for how many it marked ((right + 1) /
(marked + 2), Laplace's rule of succession: a rule right once in one try is not certain).
`lint()` reports a finding only at or above `min_confidence` (DEFAULT_MIN_CONFIDENCE: right
more often than wrong); the ones under it are still handed to the judge (tier 4) as
candidates, and `--min-confidence 0` shows them. The values are floored to 0.05 and
refitted whenever the rules change (docs/lint.md, "Confidence"). `too-many-rules` is a
count, not a guess, marked where the count passes the limit (a place reviewers seldom mark:
3 of 12 on dev); it is always reported.
"""

from __future__ import annotations

DEFAULT_MIN_CONFIDENCE = 0.5
# Kinds not listed (a new rule before it is measured) are reported: said, not hidden.
UNMEASURED = 1.0
CONFIDENCE: dict[str, float] = {
    # tier 1 (dev, 260 prompts: right / marked -> (right + 1) / (marked + 2), floored)
    "too-many-rules": UNMEASURED,  # a count, not a guess: reported (see the note above)
    "stacked-rules": 0.85,  # 12 / 13
    "buried-key-rule": 0.25,  # 2 / 10
    "scattered-topic": 0.05,  # 3 / 65
    "opposite-directives": 0.65,  # 1 / 1
    "reworded-directives": 0.9,  # 55 / 60
    "modal-weakening": 0.85,  # 45 / 51
    "conditional-conflict": 0.7,  # 6 / 8
    "conflicting-numbers": 0.7,  # 31 / 42
    "brevity-vs-detail": 0.95,  # 36 / 36
    "free-vs-price": 0.75,  # 8 / 10
    "vague-wording": 0.8,  # 51 / 63
    "unclear-reference": 0.65,  # 10 / 14
    "near-duplicate": 0.9,  # 65 / 71
    "paraphrase-rule": 0.9,  # 63 / 68
    # tier 2 (the same 260 prompts)
    "jargon": 0.05,  # 7 / 218
    "unusual-phrasing": 0.05,  # 0 / 21
    "surprising-word": 0.05,  # a logprobs endpoint: not measured on the corpus; as jargon
    # tier 3 (the same 260 prompts)
    "paraphrase": 0.3,  # 7 / 24
    "scattered-cluster": 0.05,  # 0 / 9
    "contradiction-candidate": 0.3,  # not measured: below the cut, a candidate for the judge
    # tier 4: the judge's own findings, quoted from the prompt (not measured)
    "judge": UNMEASURED,
}


def confidence_of(kind: str) -> float:
    """The measured precision of `kind` on the dev part (UNMEASURED when it has none)."""
    return CONFIDENCE.get(kind, UNMEASURED)
