"""Precision and recall of the claim parser on its labelled sentences, per function and language.

    .venv/bin/python bench/claims_eval.py [--split tuning|held_out|fresh|all] [--json FILE]
                                          [--misses]

The sentences are in tests/checks/claims_eval/: `tuning.jsonl` (the rules were tuned on it),
`held_out.jsonl` (written afterwards in another style, measured before any fix it prompted)
and `fresh.jsonl` (a second held-out part, written after those fixes, measured the same way).
Each line is one agent sentence with its language and what a person reads in it:

* `claims`: the (field, value) pairs the sentence ties to a field, values normalised;
* `done`: whether it states that the requested change was made;
* `mentions`: (value, stated?) probes for `mentions_value`;
* `fields`: a preset name ("order", "refund", "booking") or {field: kind}; default "order";
* `reference_date`: for dates said without a year; default 2026-11-01.

Scores, per split, language and function:

* field_claims: micro precision and recall over (field, value) pairs;
* claims_done and mentions_value: precision and recall of the positive answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from polygon_voice.checks.claims import FieldHint, claims_done, field_claims, mentions_value

EVAL_DIR = Path(__file__).resolve().parent.parent / "tests" / "checks" / "claims_eval"
SPLITS = ("tuning", "held_out", "fresh")
DEFAULT_REFERENCE = date(2026, 11, 1)
PRESETS: dict[str, dict[str, str]] = {
    "order": {"order_id": "id", "quantity": "integer", "delivery_date": "date"},
    "refund": {"order_id": "id", "amount": "number"},
    "booking": {"booking_ref": "id", "seats": "integer", "date": "date"},
}
FUNCTIONS = ("field_claims", "claims_done", "mentions_value")


@dataclass
class Tally:
    """Counts of one function on some sentences: true/false positives, false negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, predicted: Iterable[Any], expected: Iterable[Any]) -> None:
        got, want = set(predicted), set(expected)
        self.tp += len(got & want)
        self.fp += len(got - want)
        self.fn += len(want - got)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass
class Scores:
    """Tallies per language and function, and the sentences that were not read as labelled."""

    tallies: dict[str, dict[str, Tally]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)

    def tally(self, language: str, function: str) -> Tally:
        return self.tallies.setdefault(language, {}).setdefault(function, Tally())

    def overall(self, function: str) -> Tally:
        total = Tally()
        for per_function in self.tallies.values():
            part = per_function.get(function, Tally())
            total.tp, total.fp, total.fn = (
                total.tp + part.tp,
                total.fp + part.fp,
                total.fn + part.fn,
            )
        return total


def load(split: str) -> list[dict[str, Any]]:
    """The labelled sentences of one split."""
    path = EVAL_DIR / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def hints(spec: str | Mapping[str, str] | None) -> dict[str, FieldHint]:
    kinds = PRESETS[spec] if isinstance(spec, str) else (spec or PRESETS["order"])
    return {name: FieldHint(kind) for name, kind in kinds.items()}  # type: ignore[arg-type]


def score(items: Sequence[Mapping[str, Any]]) -> Scores:
    """Run the three functions on every labelled sentence and count what they got right."""
    scores = Scores()
    for item in items:
        language, text = item["lang"], item["text"]
        reference = date.fromisoformat(item.get("reference_date", DEFAULT_REFERENCE.isoformat()))
        got = [(c.field, c.value) for c in field_claims(text, hints(item.get("fields")), language,
                                                         reference)]  # fmt: skip
        want = [(f, v) for f, v in item["claims"]]
        scores.tally(language, "field_claims").add(got, want)
        done = claims_done(text, language)
        scores.tally(language, "claims_done").add([done] if done else [],
                                                  [True] if item["done"] else [])  # fmt: skip
        mention_tally = scores.tally(language, "mentions_value")
        wrong_mentions = []
        for value, stated in item.get("mentions", []):
            said = mentions_value(text, value, language)
            mention_tally.add([0] if said else [], [0] if stated else [])
            if said != stated:
                wrong_mentions.append(f"{value!r}->{said}")
        if set(got) != set(want) or done != item["done"] or wrong_mentions:
            scores.misses.append(
                f"[{language}] {text}\n    claims {got} (want {want}); done {done} "
                f"(want {item['done']}); mentions wrong: {wrong_mentions}"
            )
    return scores


def table(split: str, scores: Scores) -> list[str]:
    """One line per language and function: precision, recall and the counts."""
    lines = [
        f"{split}:",
        f"  {'language':8} {'function':15} {'precision':>9} {'recall':>7}   tp/fp/fn",
    ]
    languages = sorted(scores.tallies)
    for language in [*languages, "all"]:
        for function in FUNCTIONS:
            t = scores.overall(function) if language == "all" else scores.tally(language, function)
            lines.append(
                f"  {language:8} {function:15} {t.precision:9.3f} {t.recall:7.3f}   "
                f"{t.tp}/{t.fp}/{t.fn}"
            )
    return lines


def as_json(scores: Scores) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for language, per_function in scores.tallies.items():
        out[language] = {
            name: {**asdict(t), "precision": t.precision, "recall": t.recall}
            for name, t in per_function.items()
        }
    out["all"] = {
        name: {**asdict(t), "precision": t.precision, "recall": t.recall}
        for name in FUNCTIONS
        for t in [scores.overall(name)]
    }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--misses", action="store_true", help="list the sentences read wrongly")
    args = parser.parse_args(argv)
    splits = SPLITS if args.split == "all" else (args.split,)
    figures: dict[str, Any] = {}
    for split in splits:
        items = load(split)
        scores = score(items)
        print(f"{len(items)} sentences")
        print("\n".join(table(split, scores)))
        if args.misses:
            print("\n".join(scores.misses))
        figures[split] = as_json(scores)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
