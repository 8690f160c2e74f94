"""How often Polygon's outcome verdict on imported tau-bench calls agrees with tau-bench's label.

    .venv/bin/python bench/taubench_agreement.py [FILE] [--json OUT]

FILE defaults to the 50 airline trajectories of the public tau-bench data
(`../shared/data/tau_bench_v1_airline/gpt-4o-airline_trial0.json` beside the project).
Each record is imported as `polygon import` does it (format detected, deterministic judge,
a SQLite store in a temporary folder). The gold actions become each call's `expect:`
(docs/import-research.md); the label (`reward`, 1 pass / 0 fail) is kept as metadata and
never read by the judging. The script then compares, call by call:

* the outcome verdict: the expectation check (stage `expect`) met or not met;
* the judge's verdict: `pass` against anything else;

with tau-bench's label, prints both agreement figures, the confusion matrix, and every
disagreement with the check that decided it. Nothing here is a test; the test
tests/imports/test_taubench_agreement.py keeps the outcome agreement from regressing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from polygon_voice.imports.convert import import_entry
from polygon_voice.imports.judging import CallJudging
from polygon_voice.imports.run import ImportOptions, import_calls
from polygon_voice.judge import Judging
from polygon_voice.store import Store

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tau_bench_v1_airline"
DEFAULT_FILE = DATA / "gpt-4o-airline_trial0.json"
TARGET = 45  # of 50


@dataclass(frozen=True)
class Call:
    call_id: str
    label: bool  # tau-bench's reward == 1
    met: bool | None  # the expectation check; None: no expectation stored
    verdict: str | None
    why: str  # the failed checks, or the verdict's first reason

    @property
    def outcome_agrees(self) -> bool:
        return self.met is not None and self.met == self.label

    @property
    def verdict_agrees(self) -> bool:
        return (self.verdict == "pass") == self.label


@dataclass(frozen=True)
class Agreement:
    calls: list[Call]

    @property
    def outcome(self) -> int:
        return sum(c.outcome_agrees for c in self.calls)

    @property
    def verdict(self) -> int:
        return sum(c.verdict_agrees for c in self.calls)

    def matrix(self) -> Counter[tuple[str, str]]:
        return Counter(
            ("pass" if c.label else "fail", "met" if c.met else "not met") for c in self.calls
        )


def _label(result_trace: dict[str, Any] | None) -> bool:
    metadata = (result_trace or {}).get("metadata") or {}
    reward = metadata.get("reward")
    if not isinstance(reward, (int, float)):
        raise SystemExit("a tau-bench call without its reward in the kept metadata")
    return reward >= 1


def _why(expect: dict[str, Any] | None, judgement: dict[str, Any] | None) -> str:
    failed = [c for c in (expect or {}).get("checks", []) if not c.get("passed")]
    if failed:
        return "; ".join(f"{c['name']}: {c['why']}" for c in failed)
    reasons = (judgement or {}).get("reasons") or []
    return reasons[0] if reasons else ""


def measure(path: Path) -> Agreement:
    """Import `path` into a fresh store and read back each call's verdicts and label."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{Path(folder) / 'polygon.db'}")
        summary = import_calls(
            store, ImportOptions(paths=(str(path),)), None, CallJudging(Judging())
        )
        if summary.failed or summary.run_id is None:
            lines = "\n".join(f.line() for f in summary.failed)
            raise SystemExit(f"the import failed for {len(summary.failed)} record(s):\n{lines}")
        calls = []
        for result in store.iter_conversations(summary.run_id):
            expect = store.get_stage_result(summary.run_id, result.id, "expect")
            judgement = store.get_stage_result(summary.run_id, result.id, "judge")
            calls.append(
                Call(
                    call_id=result.id,
                    label=_label(import_entry(result)),
                    met=None if expect is None else bool(expect.get("met")),
                    verdict=None if judgement is None else str(judgement.get("verdict")),
                    why=_why(expect, judgement),
                )
            )
        store.close()
    return Agreement(calls)


def report(agreement: Agreement) -> None:
    n = len(agreement.calls)
    matrix = agreement.matrix()
    print(f"tau-bench airline, {n} calls")
    print(f"  outcome verdict (expectation met) agrees with the label: {agreement.outcome} of {n}")
    print(f"  judge verdict (pass vs not pass) agrees with the label:  {agreement.verdict} of {n}")
    print("  label \\ expectation   met   not met")
    for label in ("pass", "fail"):
        print(f"  {label:>20}  {matrix[(label, 'met')]:4d}  {matrix[(label, 'not met')]:8d}")
    target = "MET" if agreement.outcome >= TARGET * n / 50 else "NOT MET"
    print(f"  target >= {TARGET} of 50: {target}")
    for call in agreement.calls:
        if not call.outcome_agrees or not call.verdict_agrees:
            label = "pass" if call.label else "fail"
            print(
                f"  {call.call_id}: label {label}, expectation "
                f"{'met' if call.met else 'not met'}, verdict {call.verdict}: {call.why[:300]}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--json", type=Path, help="write the per-call figures here too")
    args = parser.parse_args()
    if not args.file.is_file():
        sys.exit(f"{args.file}: no such file (the public tau-bench data is not beside the project)")
    agreement = measure(args.file)
    report(agreement)
    if args.json is not None:
        rows = [asdict(c) for c in agreement.calls]
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
