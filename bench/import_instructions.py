"""One import of N generated records, for counting machine instructions under callgrind.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/import_instructions.py 0 deterministic
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/import_instructions.py 128 deterministic

The difference of the two "Collected" counts, divided by 128, is what one call costs in
instructions: a figure that does not move with the machine's load, unlike seconds (used in
docs/performance.md to compare two versions of the code on a busy machine). Every run makes
the same GENERATED records (the N imported and the rest into a spare file: making a record
costs about 1.5 million instructions, which the difference must not count) before anything
is imported, and a warm-up of 20 records goes first, so both counts hold the same start-up,
imports, records and first-use costs. Judge: `deterministic` or `none`.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from imports import judging_for, options_for, vapi_record  # bench/imports.py
from polygon_voice.imports.run import import_calls
from polygon_voice.store import Store

WARM_UP = 20
GENERATED = 128  # records made in every run, whatever N (at most this many are imported)


def main() -> None:
    size, judge = int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "deterministic"
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        warm, calls = folder / "warm.jsonl", folder / "calls.jsonl"
        warm.write_text("".join(json.dumps(vapi_record(10**6 + n)) + "\n" for n in range(WARM_UP)))
        calls.write_text("".join(json.dumps(vapi_record(n)) + "\n" for n in range(size)))
        spare = range(size, max(size, GENERATED))
        (folder / "spare.jsonl").write_text(
            "".join(json.dumps(vapi_record(n)) + "\n" for n in spare)
        )
        for path, db in ((warm, "warm.db"), (calls, "calls.db")):
            store = Store(f"sqlite:///{folder / db}")
            import_calls(store, options_for(path, "vapi"), None, judging_for(judge))
            store.close()


if __name__ == "__main__":
    main()
