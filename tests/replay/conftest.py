"""Imported runs to replay: the fixtures of this folder imported into a private database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from polygon_voice.imports.expect_file import load_expect_file
from polygon_voice.imports.run import ImportOptions, import_calls
from polygon_voice.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
ORDERS = FIXTURES / "orders.jsonl"
ORDERS_EXPECT = FIXTURES / "orders_expect.yaml"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(f"sqlite:///{tmp_path / 'polygon.db'}")
    try:
        yield opened
    finally:
        opened.close()


def import_file(store: Store, path: Path, expect: Path | None = ORDERS_EXPECT) -> str:
    """Import `path` (with the expect file) and return the run id."""
    expect_file = load_expect_file(expect) if expect is not None else None
    summary = import_calls(store, ImportOptions(paths=(str(path),), expect_file=expect_file))
    assert summary.run_id is not None, summary.as_dict()
    return summary.run_id


def first_call_only(tmp_path: Path) -> Path:
    """orders.jsonl's first call alone, in a file of its own."""
    path = tmp_path / "one.jsonl"
    path.write_text(ORDERS.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    return path


def call_record(call_id: str) -> dict[str, object]:
    for line in ORDERS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["id"] == call_id:
            return record
    raise KeyError(call_id)


def import_judged(store: Store, path: Path, expect: Path | None = ORDERS_EXPECT) -> str:
    """Import `path` judged as `polygon import` judges it (deterministic judge, v3)."""
    from polygon_voice.api.setup import judging_for
    from polygon_voice.imports.judging import CallJudging
    from polygon_voice.judge import DEFAULT_RUBRIC

    expect_file = load_expect_file(expect) if expect is not None else None
    judging = CallJudging(judging_for("deterministic", str(DEFAULT_RUBRIC), 1))
    options = ImportOptions(paths=(str(path),), expect_file=expect_file)
    summary = import_calls(store, options, None, judging)
    assert summary.run_id is not None, summary.as_dict()
    return summary.run_id
