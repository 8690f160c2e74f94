"""A real `polygon run` of the example suite, whose transcripts.jsonl the round trip imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE_SUITE, Polygon


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Polygon:
    """A database holding one run of the example suite, its files in `out/`."""
    polygon = Polygon(tmp_path_factory.mktemp("played"))
    code, _out, err = polygon("run", str(EXAMPLE_SUITE), "--seed", "0", "--out", "out")
    assert code == 0, err
    return polygon


def transcripts(polygon: Polygon) -> Path:
    return polygon.workdir / "out" / "transcripts.jsonl"
