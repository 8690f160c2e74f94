"""Prompt analysis benchmark: `polygon lint` seconds by prompt size, tiers 1-2.

    .venv/bin/python bench/lint.py [--sizes 100000,250000,500000,1000000] [--max-tier 2]
                                   [--seed 1] [--json FILE]

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
import itertools
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    parser.add_argument("--max-tier", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kind", choices=KINDS, default="mixed")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
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


if __name__ == "__main__":
    sys.exit(main())
