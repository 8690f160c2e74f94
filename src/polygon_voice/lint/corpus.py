"""The labelled prompt corpus (bench/lint_corpus/): loading, validation and scoring.

Each corpus file is one prompt with its labelled flaws (axis, shape, exact spans). A lint's
findings are matched against the labels with one rule, stated in docs/lint.md:

* a finding is a true positive when its span overlaps a labelled span of a flaw of the
  same axis; precision is over findings;
* a flaw is found when any of its spans is overlapped by such a finding; recall is over
  flaws;
* span overlap is the mean character IoU of each true-positive finding with the labelled
  span it overlaps most.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from polygon_voice.lint.lexicon import LANGUAGES
from polygon_voice.lint.model import AXES, Finding, LintReport

# `dev` is what rules are fitted on; `heldout` and `fresh` are not (bench/lint_corpus/README).
SPLITS = ("dev", "heldout", "fresh")
STYLES = ("short", "long", "bulleted", "prose", "sections", "tool-heavy", "policy")
SHAPES: dict[str, tuple[str, ...]] = {
    "contradiction": (
        "opposite-directives",
        "opposite-directives-reworded",
        "conditional-conflict",
        "modal-weakening",
        "conflicting-numbers",
        "brevity-vs-detail",
    ),
    "redundancy": (
        "repeated-verbatim",
        "paraphrase-synonyms",
        "paraphrase-reordered",
        "repeated-far-apart",
    ),
    "ambiguity": ("vague-quantifier", "vague-condition", "undefined-term", "unclear-reference"),
    "overload": ("stacked-rules", "too-many-rules"),
    "diluted_attention": ("buried-key-rule", "scattered-related-rules"),
}
REQUIRED_KEYS = ("id", "language", "style", "domain", "notes", "prompt", "flaws")
FLAW_KEYS = ("axis", "shape", "spans")


class CorpusError(ValueError):
    """A corpus file that does not follow the format: names the file and the field."""


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Flaw:
    axis: str
    shape: str
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class CorpusPrompt:
    id: str
    split: str
    language: str
    style: str
    domain: str
    prompt: str
    flaws: tuple[Flaw, ...]

    @property
    def clean(self) -> bool:
        return not self.flaws


def load_prompt(path: Path, split: str) -> CorpusPrompt:
    """One corpus file, checked field by field; a CorpusError names the file and field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CorpusError(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: not a mapping of the corpus keys")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    extra = sorted(set(map(str, data)) - set(REQUIRED_KEYS))
    if missing or extra:
        raise CorpusError(f"{path}: missing keys {missing}, unknown keys {extra}")
    for key in ("id", "language", "style", "domain", "notes", "prompt"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise CorpusError(f"{path}: {key}: must be a non-empty string")
    _check_choice(path, "language", data["language"], LANGUAGES)
    _check_choice(path, "style", data["style"], STYLES)
    if data["id"] != path.stem or not data["id"].startswith(f"{data['language']}-"):
        raise CorpusError(f"{path}: id: {data['id']!r} must be <language>-<nnn> and the file name")
    if not isinstance(data["flaws"], list):
        raise CorpusError(f"{path}: flaws: must be a list ([] for a clean prompt)")
    text: str = data["prompt"]
    flaws = tuple(_flaw(path, f"flaws[{k}]", raw, text) for k, raw in enumerate(data["flaws"]))
    return CorpusPrompt(
        id=data["id"],
        split=split,
        language=data["language"],
        style=data["style"],
        domain=data["domain"],
        prompt=text,
        flaws=flaws,
    )


def _check_choice(path: Path, key: str, value: object, allowed: Iterable[str]) -> None:
    allowed = tuple(allowed)
    if value not in allowed:
        raise CorpusError(f"{path}: {key}: {value!r} is not one of {', '.join(allowed)}")


def _flaw(path: Path, where: str, raw: Any, text: str) -> Flaw:
    if not isinstance(raw, dict) or sorted(map(str, raw)) != sorted(FLAW_KEYS):
        raise CorpusError(f"{path}: {where}: must have exactly the keys {', '.join(FLAW_KEYS)}")
    _check_choice(path, f"{where}.axis", raw["axis"], AXES)
    _check_choice(path, f"{where}.shape", raw["shape"], SHAPES[raw["axis"]])
    spans = raw["spans"]
    if not isinstance(spans, list) or not spans:
        raise CorpusError(f"{path}: {where}.spans: must be a non-empty list of strings")
    if raw["axis"] in ("contradiction", "redundancy") and len(spans) < 2:
        raise CorpusError(f"{path}: {where}.spans: a {raw['axis']} lists all its members (2+)")
    placed = []
    for k, span in enumerate(spans):
        if not isinstance(span, str) or not span.strip():
            raise CorpusError(f"{path}: {where}.spans[{k}]: must be a non-empty string")
        count = text.count(span)
        if count != 1:
            raise CorpusError(
                f"{path}: {where}.spans[{k}]: occurs {count} times in the prompt, not once: "
                f"{span!r}"
            )
        start = text.index(span)
        placed.append(Span(start, start + len(span)))
    return Flaw(axis=raw["axis"], shape=raw["shape"], spans=tuple(placed))


def load_split(root: Path, split: str) -> list[CorpusPrompt]:
    """Every prompt of one split (a folder of `<id>.yaml`), in id order."""
    folder = root / split
    return [load_prompt(path, split) for path in sorted(folder.glob("*.yaml"))]


def load_corpus(root: Path, splits: Iterable[str] = SPLITS) -> list[CorpusPrompt]:
    """The prompts of `splits`; an id seen twice (in any split) is an error."""
    prompts = [p for split in splits for p in load_split(root, split)]
    seen: dict[str, str] = {}
    for p in prompts:
        if p.id in seen:
            raise CorpusError(f"{root}: id {p.id} is in {seen[p.id]}/ and {p.split}/")
        seen[p.id] = p.split
    return prompts


# --- scoring ---------------------------------------------------------------------------


def _overlap(a_start: int, a_end: int, span: Span) -> int:
    return max(0, min(a_end, span.end) - max(a_start, span.start))


def _iou(finding: Finding, span: Span) -> float:
    inter = _overlap(finding.start, finding.end, span)
    union = max(finding.end, span.end) - min(finding.start, span.start)
    return inter / union if union else 0.0


@dataclass
class AxisTally:
    """Counts for one axis over a set of prompts."""

    findings: int = 0
    true_positives: int = 0
    flaws: int = 0
    found: int = 0
    ious: list[float] = field(default_factory=list)

    def add(self, other: AxisTally) -> None:
        self.findings += other.findings
        self.true_positives += other.true_positives
        self.flaws += other.flaws
        self.found += other.found
        self.ious.extend(other.ious)

    @property
    def precision(self) -> float | None:
        return self.true_positives / self.findings if self.findings else None

    @property
    def recall(self) -> float | None:
        return self.found / self.flaws if self.flaws else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None
        return 2 * p * r / (p + r)

    @property
    def span_iou(self) -> float | None:
        return sum(self.ious) / len(self.ious) if self.ious else None


def tally(prompt: CorpusPrompt, report: LintReport) -> dict[str, AxisTally]:
    """Match one report's findings against one prompt's labels, per axis."""
    result: dict[str, AxisTally] = {}
    for axis in AXES:
        flaws = [f for f in prompt.flaws if f.axis == axis]
        findings = report.axes[axis].findings
        counts = AxisTally(findings=len(findings), flaws=len(flaws))
        hit: set[int] = set()
        for finding in findings:
            touching = [
                (k, span)
                for k, flaw in enumerate(flaws)
                for span in flaw.spans
                if _overlap(finding.start, finding.end, span) > 0
            ]
            if touching:
                counts.true_positives += 1
                hit.update(k for k, _ in touching)
                counts.ious.append(max(_iou(finding, span) for _, span in touching))
        counts.found = len(hit)
        result[axis] = counts
    return result


@dataclass
class Figures:
    """One tier setting over a set of prompts: per axis, per language, FP on clean, time."""

    axes: dict[str, AxisTally]
    by_language: dict[str, dict[str, AxisTally]]
    prompts: int
    clean_prompts: int
    clean_findings: dict[str, int]
    seconds: list[float]

    @property
    def clean_fp_rate(self) -> float | None:
        """False-positive findings (all axes) per clean prompt."""
        if not self.clean_prompts:
            return None
        return sum(self.clean_findings.values()) / self.clean_prompts

    def to_json(self) -> dict[str, Any]:
        def axis_json(t: AxisTally) -> dict[str, Any]:
            return {
                "findings": t.findings,
                "true_positives": t.true_positives,
                "flaws": t.flaws,
                "found": t.found,
                "precision": _round(t.precision),
                "recall": _round(t.recall),
                "f1": _round(t.f1),
                "span_iou": _round(t.span_iou),
            }

        return {
            "prompts": self.prompts,
            "clean_prompts": self.clean_prompts,
            "clean_fp_per_prompt": _round(self.clean_fp_rate),
            "clean_findings_by_axis": self.clean_findings,
            "seconds_mean": _round(sum(self.seconds) / len(self.seconds) if self.seconds else None),
            "seconds_max": _round(max(self.seconds, default=0.0)),
            "axes": {a: axis_json(t) for a, t in self.axes.items()},
            "languages": {
                lang: {a: axis_json(t) for a, t in axes.items()}
                for lang, axes in self.by_language.items()
            },
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


Linter = Callable[[CorpusPrompt], LintReport]


def evaluate(
    prompts: list[CorpusPrompt],
    linter: Linter,
    on_prompt: Callable[[CorpusPrompt, LintReport], None] | None = None,
) -> Figures:
    """Lint each prompt with `linter` and add up the matches (see the module's rule)."""
    axes: dict[str, AxisTally] = {a: AxisTally() for a in AXES}
    by_language: dict[str, dict[str, AxisTally]] = {}
    clean_findings: dict[str, int] = dict.fromkeys(AXES, 0)
    seconds = []
    for prompt in prompts:
        started = time.perf_counter()
        report = linter(prompt)
        seconds.append(time.perf_counter() - started)
        counts = tally(prompt, report)
        lang = by_language.setdefault(prompt.language, {a: AxisTally() for a in AXES})
        for axis, t in counts.items():
            axes[axis].add(t)
            lang[axis].add(t)
            if prompt.clean:
                clean_findings[axis] += t.findings
        if on_prompt is not None:
            on_prompt(prompt, report)
    return Figures(
        axes=axes,
        by_language=dict(sorted(by_language.items())),
        prompts=len(prompts),
        clean_prompts=sum(p.clean for p in prompts),
        clean_findings=clean_findings,
        seconds=seconds,
    )
