"""The same seed gives byte-identical transcripts in separate processes (PIPE-2)."""

from __future__ import annotations

from tests.cli.conftest import EXAMPLE_SUITE, Polygon


def test_same_seed_same_transcripts_across_processes(polygon: Polygon) -> None:
    outputs = []
    for hash_seed, out in (("1", "a"), ("987", "b")):
        result = polygon.subprocess(
            "run",
            str(EXAMPLE_SUITE),
            "--seed",
            "42",
            "--out",
            out,
            env={"PYTHONHASHSEED": hash_seed},
        )
        assert result.returncode == 0, result.stderr
        outputs.append((polygon.workdir / out / "transcripts.jsonl").read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"\n") == 9


def test_another_seed_changes_the_timeline(polygon: Polygon) -> None:
    texts = []
    for seed in ("1", "2"):
        result = polygon.subprocess("run", str(EXAMPLE_SUITE), "--seed", seed, "--out", seed)
        assert result.returncode == 0, result.stderr
        texts.append((polygon.workdir / seed / "transcripts.jsonl").read_text())
    assert texts[0] != texts[1]  # latencies are drawn from the seed
