"""Prompt analysis benchmark: precision and recall on the labelled corpus; time by size.

    .venv/bin/python bench/lint.py [--split dev|heldout|fresh|unseen|all]
                                   [--tiers 1,1+2,1+2+3,judge]
                                   [--cold] [--json FILE|-] [--misses AXES (dev only)]
    .venv/bin/python bench/lint.py --calibrate [--max-tier 2]   (dev only)
    .venv/bin/python bench/lint.py --scale [--sizes 100000,250000,500000,1000000]
                                   [--max-tier 2] [--seed 1] [--kind mixed|variants]
                                   [--json FILE]

Corpus mode (the default) lints every prompt of bench/lint_corpus/ (dev, heldout and
fresh separately, and the two unseen parts together; `--split unseen` skips dev) through
the Python API, per tier setting: tier 1; 1+2; 1+2+3 (when the
`embeddings` extra is installed, else said skipped); and all four with the judge on the
project's fake LLM server (a plumbing check: the fake judge finds nothing). It prints per
axis precision, recall, F1, span overlap (mean character IoU of matched findings), false
positives per clean prompt, seconds per prompt (mean, max) and per language, then the
targets on each part nothing was fitted on (heldout, fresh, and the two together;
docs/lint.md), met or missed. The matching rule is in
polygon_voice/lint/corpus.py and docs/lint.md. It exits non-zero only on errors.

Scale mode (--scale, or any of --sizes/--kind) times synthetic prompts by size.
The prompts are synthetic, of two kinds (--kind):

* mixed (the default), shaped like a long real prompt: sentences that start as the example
  prompts' sentences do ("Always", "Never", "Ask", "The" ...) and go on with 5-16 English
  words drawn by frequency (Zipf, from wordfreq's list when the `noise` extra is installed,
  else from the examples' words); 5 % restate an earlier sentence with one word changed
  (near-duplicates), 2 % say one with the opposite polarity (contradictions);
* variants, a worst case for the pair rules: every sentence is one of the ~60 example
  sentences with half of its words swapped, so each has hundreds of close relatives.

Each size is
linted once in this process after a warm-up on the small example prompt (word lists and,
for tier 2, wordfreq loaded). Printed per size: bytes, sentences, findings, seconds, and
seconds per 100 KB (flat when the growth is linear), with the ratio of the last size's
time to the first's against the ratio of their sizes. The target is a 1 MB prompt in
under 30 s for tiers 1-2. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = (
    ROOT / "examples" / "prompts" / "bad_prompt.md",
    ROOT / "examples" / "order_line" / "prompt.md",
    ROOT / "examples" / "prompt_agent" / "prompt.md",
)
DEFAULT_SIZES = (100_000, 250_000, 500_000, 1_000_000)
TARGET_SECONDS = 30.0
TARGET_BYTES = 1_000_000
SWAP_SHARE = 0.5  # "variants": of each example sentence's words replaced by another word
RESTATED = 0.05  # "mixed": share of sentences that restate an earlier one, one word changed
FLIPPED = 0.02  # "mixed": share that say an earlier one with the opposite polarity
KINDS = ("mixed", "variants")
Draw = Callable[[], str]
VOCABULARY = 30_000  # English words to draw from (by frequency rank)


@dataclass(frozen=True)
class Figure:
    """One prompt size and what linting it cost."""

    size_bytes: int
    sentences: int
    findings: int
    seconds: float

    @property
    def seconds_per_100kb(self) -> float:
        return self.seconds / (self.size_bytes / 100_000)


def synthetic_prompt(size_bytes: int, seed: int = 1, kind: str = "mixed") -> str:
    """About `size_bytes` of prompt text of `kind` (see KINDS)."""
    from polygon_voice.lint.text import Prompt

    rng = random.Random(seed)
    sentences = [s.text for path in PROMPTS for s in Prompt(path.read_text("utf-8")).sentences]
    draw = _word_source(rng, [w.lower() for s in sentences for w in s.split() if w.isalpha()])
    make = _variant if kind == "variants" else _mixed
    said: list[str] = []
    parts: list[str] = []
    total = 0
    while total < size_bytes:
        sentence = make(rng, sentences, said, draw)
        said.append(sentence)
        # A paragraph every few sentences, as prompts have.
        piece = sentence + ("\n\n" if rng.random() < 0.2 else " ")
        parts.append(piece)
        total += len(piece.encode("utf-8"))
    return "".join(parts)


def _mixed(rng: random.Random, examples: list[str], said: list[str], draw: Draw) -> str:
    roll = rng.random()
    if said and roll < RESTATED:
        # A rule said again, one word changed: a near-duplicate.
        words = rng.choice(said).rstrip(".").split()
        words[rng.randrange(1, len(words))] = draw()
    elif said and roll < RESTATED + FLIPPED:
        # A rule said again with the opposite polarity: a contradiction.
        words = rng.choice(said).rstrip(".").split()
        words[0] = "Always" if words[0] == "Never" else "Never"
    else:
        # A new sentence: an example's first word (an instruction or not), then fresh words.
        words = [rng.choice(examples).split()[0]]
        words += [draw() for _ in range(rng.randint(5, 16))]
    return " ".join(words) + "."


def _variant(rng: random.Random, examples: list[str], said: list[str], draw: Draw) -> str:
    words = rng.choice(examples).split()
    # The first word is kept: it carries the instruction ("Never", "Ask", "Always").
    for k in range(1, len(words)):
        if rng.random() < SWAP_SHARE and words[k].isalpha():
            words[k] = draw()
    sentence = " ".join(words)
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def _word_source(rng: random.Random, examples: list[str]) -> Draw:
    """Words as text draws them: Zipf over English (wordfreq's list), else the examples' own.

    A long text keeps meeting new words (its vocabulary grows with its length) while the
    common ones recur everywhere; a fixed small vocabulary would instead make every long
    prompt a near-copy of itself.
    """
    try:
        import wordfreq
    except ImportError:
        return lambda: rng.choice(examples)
    words = wordfreq.top_n_list("en", VOCABULARY)
    weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))
    return lambda: rng.choices(words, cum_weights=weights)[0]


def measure(size_bytes: int, max_tier: int, seed: int, kind: str) -> Figure:
    from polygon_voice.lint import lint
    from polygon_voice.lint.text import Prompt

    text = synthetic_prompt(size_bytes, seed, kind)
    started = time.perf_counter()
    report = lint(text, max_tier=max_tier, language="en", env={}, max_bytes=None)
    seconds = time.perf_counter() - started
    findings = sum(len(axis.findings) for axis in report.axes.values())
    return Figure(len(text.encode("utf-8")), len(Prompt(text).sentences), findings, seconds)


def scale_main(args: argparse.Namespace) -> int:
    """Seconds by synthetic prompt size (the --scale mode)."""
    sizes = [int(s) for s in (args.sizes or ",".join(map(str, DEFAULT_SIZES))).split(",") if s]
    args.kind = args.kind or "mixed"
    from polygon_voice.lint import lint

    lint(PROMPTS[0].read_text("utf-8"), max_tier=args.max_tier, env={})  # warm-up: word lists
    figures = [measure(size, args.max_tier, args.seed, args.kind) for size in sizes]
    print(f"polygon lint, tiers 1-{args.max_tier}, {args.kind} prompts (seed {args.seed})")
    print(f"{'bytes':>10} {'sentences':>9} {'findings':>8} {'seconds':>8} {'s/100KB':>8}")
    for f in figures:
        print(
            f"{f.size_bytes:>10,} {f.sentences:>9,} {f.findings:>8,} "
            f"{f.seconds:>8.2f} {f.seconds_per_100kb:>8.2f}"
        )
    first, last = figures[0], figures[-1]
    size_ratio = last.size_bytes / first.size_bytes
    time_ratio = last.seconds / first.seconds if first.seconds else float("inf")
    print(f"size x{size_ratio:.1f} -> time x{time_ratio:.1f} (linear: x{size_ratio:.1f})")
    at_target = [f for f in figures if f.size_bytes >= TARGET_BYTES]
    if at_target:
        verdict = "met" if at_target[0].seconds < TARGET_SECONDS else "MISSED"
        print(f"target: {TARGET_BYTES:,} bytes in under {TARGET_SECONDS:.0f} s: {verdict}")
    if args.json is not None:
        rows = [asdict(f) | {"seconds_per_100kb": f.seconds_per_100kb} for f in figures]
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


# --- the labelled corpus --------------------------------------------------------------

CORPUS = ROOT / "bench" / "lint_corpus"
# Tier settings measured on the corpus: name -> highest tier. "judge" runs tier 4 against
# the project's fake LLM server, which answers no findings: a plumbing check, not a figure.
SETTINGS = {"1": 1, "1+2": 2, "1+2+3": 3, "judge": 4}
TARGETS = {"precision": 0.85, "recall": 0.6, "recall_tier3": 0.8, "clean_fp": 0.1}
TARGET_AXES = ("contradiction", "redundancy")
# What each --split scores: parts, and "heldout+fresh", the two unseen parts together.
UNSEEN = "heldout+fresh"
SPLIT_CHOICES = {
    "dev": ["dev"],
    "heldout": ["heldout"],
    "fresh": ["fresh"],
    "unseen": ["heldout", "fresh", UNSEEN],
    "all": ["dev", "heldout", "fresh", UNSEEN],
    "both": ["dev", "heldout"],
}


def corpus_linter(max_tier: int, settings: Any = None) -> Callable[[Any], Any]:
    """A linter of corpus prompts: the language is detected, as `polygon lint` does."""
    from polygon_voice.lint import lint

    def run(prompt: Any) -> Any:
        return lint(prompt.prompt, max_tier=max_tier, env={}, settings=settings)

    return run


def _fake_judge_settings(base_url: str, cache: Path) -> Any:
    from polygon_voice.llm import load_llm_config

    env = {"POLYGON_BASE_URL": base_url, "POLYGON_JUDGE_MODEL": "fake"}
    return load_llm_config(env=env).model_copy(update={"cache_dir": cache})


def _cell(value: float | None) -> str:
    return "   -" if value is None else f"{value:4.2f}"


def print_figures(name: str, split: str, figures: Any, note: str = "") -> None:
    fp = figures.clean_fp_rate
    mean = sum(figures.seconds) / len(figures.seconds) if figures.seconds else 0.0
    print(
        f"\n== tiers {name}, {split}: {figures.prompts} prompts ({figures.clean_prompts} clean)"
        f"{note}"
    )
    print(
        f"{'axis':<18} {'P':>5} {'R':>5} {'F1':>5} {'IoU':>5} {'finds':>6} {'flaws':>6} "
        f"{'FP/clean':>8}"
    )
    for axis, t in figures.axes.items():
        per_clean = (
            figures.clean_findings[axis] / figures.clean_prompts if figures.clean_prompts else None
        )
        print(
            f"{axis:<18} {_cell(t.precision):>5} {_cell(t.recall):>5} {_cell(t.f1):>5} "
            f"{_cell(t.span_iou):>5} {t.findings:>6} {t.flaws:>6} {_cell(per_clean):>8}"
        )
    print(
        f"false-positive findings per clean prompt: {_cell(fp)}; "
        f"seconds per prompt: mean {mean:.3f}, max {max(figures.seconds, default=0):.3f}"
    )
    print("per language (P/R):" + "".join(f" {a[:13]:>13}" for a in figures.axes))
    for lang, axes in figures.by_language.items():
        cells = "".join(f" {_cell(t.precision) + '/' + _cell(t.recall):>13}" for t in axes.values())
        print(f"  {lang:<17}{cells}")


def verdicts(results: dict[str, dict[str, Any]]) -> list[str]:
    """The targets on each unseen part (docs/lint.md), each said met or missed."""
    lines = []
    for split in ("heldout", "fresh", UNSEEN):
        lines += _split_verdicts(split, results)
    return lines


def _split_verdicts(split: str, results: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    held = results.get("1+2", {}).get(split)
    if held is not None:
        for axis in TARGET_AXES:
            t = held.axes[axis]
            for what, value in (("precision", t.precision), ("recall", t.recall)):
                ok = value is not None and value >= TARGETS[what]
                lines.append(
                    f"{split}: tiers 1+2 {axis} {what} {_cell(value)} >= {TARGETS[what]}: "
                    f"{'met' if ok else 'MISSED'}"
                )
        fp = held.clean_fp_rate
        ok = fp is not None and fp <= TARGETS["clean_fp"]
        lines.append(
            f"{split}: tiers 1+2 false positives per clean prompt {_cell(fp)} <= "
            f"{TARGETS['clean_fp']}: {'met' if ok else 'MISSED'}"
        )
    held3 = results.get("1+2+3", {}).get(split)
    if held3 is not None:
        for axis in TARGET_AXES:
            value = held3.axes[axis].recall
            ok = value is not None and value >= TARGETS["recall_tier3"]
            lines.append(
                f"{split}: tiers 1+2+3 {axis} recall {_cell(value)} >= "
                f"{TARGETS['recall_tier3']}: {'met' if ok else 'MISSED'}"
            )
    return lines


def print_misses(prompts: list[Any], report_of: dict[str, Any], axes: list[str]) -> None:
    """Dev only: each missed flaw and each unmatched finding, for tuning the rules."""
    from polygon_voice.lint.corpus import tally

    for prompt in prompts:
        report = report_of[prompt.id]
        for axis in axes:
            for flaw in (f for f in prompt.flaws if f.axis == axis):
                hit = any(
                    min(f.end, s.end) > max(f.start, s.start)
                    for f in report.axes[axis].findings
                    for s in flaw.spans
                )
                if not hit:
                    texts = " | ".join(prompt.prompt[s.start : s.end] for s in flaw.spans)
                    print(f"MISS {prompt.id} {axis}/{flaw.shape}: {texts}")
            counts = tally(prompt, report)[axis]
            if counts.findings > counts.true_positives:
                for f in report.axes[axis].findings:
                    on_flaw = any(
                        min(f.end, s.end) > max(f.start, s.start)
                        for flaw in prompt.flaws
                        if flaw.axis == axis
                        for s in flaw.spans
                    )
                    if not on_flaw:
                        print(
                            f"FP   {prompt.id} {axis}/{f.kind}: "
                            f"{prompt.prompt[f.start : f.end][:90]!r} -- {f.message[:80]}"
                        )


def cold_start_seconds(prompts: list[Any]) -> dict[str, dict[str, float]]:
    """Wall and CPU time of a fresh `polygon lint --max-tier 2` process on the longest prompt
    of each language: what a user waits, imports and word lists included. CPU time is said
    too because on a shared machine the wall time is mostly waiting for a core."""
    import resource
    import subprocess
    import tempfile

    longest: dict[str, Any] = {}
    for p in prompts:
        if p.language not in longest or len(p.prompt) > len(longest[p.language].prompt):
            longest[p.language] = p
    times = {}
    with tempfile.TemporaryDirectory() as folder:
        for lang, p in sorted(longest.items()):
            path = Path(folder) / f"{p.id}.md"
            path.write_text(p.prompt, encoding="utf-8")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "polygon_voice", "lint", str(path), "--max-tier", "2",
                 "--json"],
                check=True, capture_output=True,
            )  # fmt: skip
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            times[f"{lang} ({p.id}, {len(p.prompt):,} chars)"] = {"wall": wall, "cpu": cpu}
    return times


def calibrate_main(args: argparse.Namespace) -> int:
    """Dev only: the precision of each kind of finding (every finding, whatever its
    confidence), smoothed for its count and floored to 0.05: the values of
    lint/confidence.py."""
    from polygon_voice.lint import lint
    from polygon_voice.lint.confidence import CONFIDENCE, DEFAULT_MIN_CONFIDENCE
    from polygon_voice.lint.corpus import CorpusError, load_split

    try:
        prompts = load_split(args.corpus, "dev")
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    right: dict[str, int] = {}
    marked: dict[str, int] = {}
    for prompt in prompts:
        report = lint(prompt.prompt, max_tier=args.max_tier, env={}, min_confidence=0.0)
        for axis, result in report.axes.items():
            spans = [s for flaw in prompt.flaws if flaw.axis == axis for s in flaw.spans]
            for f in result.findings:
                marked[f.kind] = marked.get(f.kind, 0) + 1
                hit = any(min(f.end, s.end) > max(f.start, s.start) for s in spans)
                right[f.kind] = right.get(f.kind, 0) + hit
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"dev, {len(prompts)} prompts, tiers 1-{args.max_tier}; cut {DEFAULT_MIN_CONFIDENCE}")
    print(
        f"{'kind':<24} {'right':>5} {'marked':>6} {'precision':>9} {'smoothed':>8} "
        f"{'floored':>7} {'in use':>6}"
    )
    for kind in sorted(marked):
        precision = right[kind] / marked[kind]
        smoothed = smoothed_precision(right[kind], marked[kind])
        floored = int(smoothed * 20 + 1e-9) / 20
        used = CONFIDENCE.get(kind)
        print(
            f"{kind:<24} {right[kind]:>5} {marked[kind]:>6} {precision:>9.2f} {smoothed:>8.2f} "
            f"{floored:>7.2f} {'-' if used is None else f'{used:.2f}':>6}"
        )
    return 0


def smoothed_precision(right: int, marked: int) -> float:
    """(right + 1) / (marked + 2): the precision expected on a prompt not yet seen, under a
    uniform prior (Laplace's rule of succession). A kind right 1 time in 1 on dev is not
    "certain": 0.67; one right 28 times in 31 stays near its rate, 0.88."""
    return (right + 1) / (marked + 2)


def corpus_main(args: argparse.Namespace) -> int:
    """Precision, recall, span overlap and time per axis, tier and language on the corpus."""
    import tempfile

    from polygon_voice.lint.corpus import CorpusError, evaluate, load_corpus
    from polygon_voice.lint.engine import _embeddings_unavailable

    try:
        prompts = load_corpus(args.corpus)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    splits = SPLIT_CHOICES[args.split]
    if args.misses and splits != ["dev"]:
        print(
            "error: --misses shows single prompts: dev only (--split dev); the held-out "
            "part is read for its totals alone",
            file=sys.stderr,
        )
        return 2
    names = [n.strip() for n in args.tiers.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        print(
            f"error: unknown tier setting(s) {unknown}; known: {', '.join(SETTINGS)}",
            file=sys.stderr,
        )
        return 2
    results: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    for name in names:
        why = _embeddings_unavailable() if name == "1+2+3" else None
        if why is not None:
            skipped[name] = why
            print(f"\n== tiers {name}: skipped: {why}")
            continue
        with contextlib.ExitStack() as stack:
            settings = None
            if name == "judge":
                from polygon_voice.testing import FakeLLMServer, Rule

                server = stack.enter_context(
                    FakeLLMServer([Rule(role="judge", json={"findings": []})])
                )
                cache = Path(stack.enter_context(tempfile.TemporaryDirectory()))
                settings = _fake_judge_settings(server.base_url, cache)
            linter = corpus_linter(SETTINGS[name], settings)
            for split in splits:
                parts = split.split("+")
                part = [p for p in prompts if p.split in parts]
                if not all(any(p.split == s for p in part) for s in parts):
                    continue  # an empty part, or a combination holding only one of them
                reports: dict[str, Any] = {}
                tiers_seen: set[tuple[int, ...]] = set()

                def keep(
                    prompt: Any,
                    report: Any,
                    reports: dict[str, Any] = reports,
                    tiers_seen: set[tuple[int, ...]] = tiers_seen,
                ) -> None:
                    reports[prompt.id] = report
                    tiers_seen.add(tuple(report.tiers_run))
                    print(".", end="", file=sys.stderr, flush=True)

                figures = evaluate(part, linter, keep)
                print(file=sys.stderr)
                results.setdefault(name, {})[split] = figures
                notes = {
                    s.reason
                    for r in reports.values()
                    for s in r.tiers_skipped
                    if s.tier <= SETTINGS[name]
                }
                note = f"; tiers run {sorted(tiers_seen)}" + (
                    f"; skipped: {'; '.join(sorted(notes))}" if notes else ""
                )
                if name == "judge":
                    note += " (fake judge answering no findings: plumbing check only)"
                print_figures(name, split, figures, note)
                if args.misses:
                    print_misses(part, reports, args.misses.split(","))
    lines = verdicts(results)
    if lines:
        print("\nTargets on the parts nothing was fitted on:")
        for line in lines:
            print("  " + line)
    startup: dict[str, dict[str, float]] = {}
    if args.cold:
        startup = cold_start_seconds([p for p in prompts if p.split == "dev"])
        print(
            "\nA fresh `polygon lint --max-tier 2` process on the longest dev prompt per "
            "language (target: under 2 s):"
        )
        for what, seconds in startup.items():
            print(f"  {what}: {seconds['wall']:.2f} s wall, {seconds['cpu']:.2f} s CPU")
    if args.json is not None:
        data = {
            "settings": {
                name: {split: figures.to_json() for split, figures in by_split.items()}
                for name, by_split in results.items()
            },
            "skipped": skipped,
            "targets": lines,
            "cold_start_seconds": startup,
        }
        dumped = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        if str(args.json) == "-":
            sys.stdout.write(dumped)
        else:
            args.json.write_text(dumped, encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scale",
        action="store_true",
        help="time synthetic prompts by size instead of scoring the corpus",
    )
    parser.add_argument("--sizes", default=None, help="--scale: prompt sizes in bytes")
    parser.add_argument("--max-tier", type=int, default=2, help="--scale: highest tier")
    parser.add_argument("--seed", type=int, default=1, help="--scale: random seed")
    parser.add_argument("--kind", choices=KINDS, default=None, help="--scale: prompt kind")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the labelled corpus")
    parser.add_argument("--split", choices=tuple(SPLIT_CHOICES), default="all")
    parser.add_argument(
        "--tiers",
        default=",".join(SETTINGS),
        help=f"tier settings to score, of {', '.join(SETTINGS)}",
    )
    parser.add_argument(
        "--misses",
        default="",
        help="dev only: list missed flaws and unmatched findings of these axes",
    )
    parser.add_argument(
        "--cold", action="store_true", help="also time a fresh `polygon lint` process per language"
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="write the figures here (- for stdout)"
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="dev only: precision of each kind of finding (lint/confidence.py), tiers 1-MAX_TIER",
    )
    args = parser.parse_args(argv)
    if args.calibrate:
        return calibrate_main(args)
    if args.scale or args.sizes is not None or args.kind is not None:
        return scale_main(args)
    return corpus_main(args)


if __name__ == "__main__":
    sys.exit(main())
