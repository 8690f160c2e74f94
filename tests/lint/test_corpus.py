"""The labelled corpus (bench/lint_corpus/) follows its format, and the loader says why not."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from polygon_voice.lint.corpus import SHAPES, CorpusError, load_corpus, load_prompt, tally
from polygon_voice.lint.model import AXES
from polygon_voice.lint.text import Prompt

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "lint_corpus"


@pytest.fixture(scope="module")
def corpus() -> list:  # type: ignore[type-arg]
    return load_corpus(CORPUS)


def test_every_file_loads_with_valid_keys_names_and_spans(corpus: list) -> None:  # type: ignore[type-arg]
    # load_corpus checks keys, axis and shape names, each span an exact unique substring
    # and ids unique across both parts; here the totals the corpus must reach.
    assert len(corpus) >= 80
    assert sum(len(p.flaws) for p in corpus) >= 250
    languages = Counter(p.language for p in corpus)
    assert all(languages[lang] >= 10 for lang in ("de", "hr", "ru")), languages
    for split in ("dev", "heldout", "fresh"):
        part = [p for p in corpus if p.split == split]
        assert {p.language for p in part} == {"en", "de", "hr", "ru"}
        assert any(p.clean for p in part)
    axes = Counter(f.axis for p in corpus for f in p.flaws)
    assert set(axes) == set(AXES)


def test_each_prompt_is_in_one_part_only(corpus: list) -> None:  # type: ignore[type-arg]
    ids = [p.id for p in corpus]
    assert len(ids) == len(set(ids))


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "en-001.yaml"
    path.write_text(body, encoding="utf-8")
    return path


GOOD = """id: en-001
language: en
style: short
domain: test
notes: none
prompt: |
  Always offer a refund. Never offer a refund.
flaws:
  - axis: contradiction
    shape: opposite-directives
    spans: ["Always offer a refund.", "Never offer a refund."]
"""


def test_a_good_file_loads_with_its_spans_placed(tmp_path: Path) -> None:
    prompt = load_prompt(write(tmp_path, GOOD), "dev")
    (flaw,) = prompt.flaws
    assert [prompt.prompt[s.start : s.end] for s in flaw.spans] == [
        "Always offer a refund.",
        "Never offer a refund.",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("shape: opposite-directives", "shape: opposite"), "flaws[0].shape: 'opposite'"),
        (("axis: contradiction", "axis: confusion"), "flaws[0].axis: 'confusion'"),
        (('"Never offer a refund."', '"Never give a refund."'), "occurs 0 times"),
        (('"Never offer a refund."', '"a refund."'), "occurs 2 times"),
        (("style: short", "style: tiny"), "style: 'tiny'"),
        (("notes: none\n", ""), "missing keys ['notes']"),
        (("id: en-001", "id: en-002"), "id: 'en-002'"),
    ],
)
def test_a_bad_file_is_refused_naming_file_and_field(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(CorpusError) as caught:
        load_prompt(path, "dev")
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_shape_names_cover_every_axis() -> None:
    assert set(SHAPES) == set(AXES)


def test_matching_counts_overlap_with_a_flaw_of_the_same_axis(tmp_path: Path) -> None:
    from polygon_voice.lint import lint

    prompt = load_prompt(write(tmp_path, GOOD), "dev")
    counts = tally(prompt, lint(prompt.prompt, max_tier=1))
    assert (counts["contradiction"].found, counts["contradiction"].flaws) == (1, 1)
    assert counts["contradiction"].true_positives == counts["contradiction"].findings == 1
    assert counts["redundancy"].flaws == 0
    assert 0 < counts["contradiction"].ious[0] <= 1
    assert Prompt(prompt.prompt).sentences  # the prompt is a real one


def test_the_benchmark_scores_a_corpus_and_keeps_the_heldout_part_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from bench.lint import main as bench_main

    for split in ("dev", "heldout"):
        (tmp_path / split).mkdir()
        (tmp_path / split / "en-001.yaml").write_text(GOOD, encoding="utf-8")
    # The same id in both parts is refused (exit 2), as is listing held-out misses.
    assert bench_main(["--corpus", str(tmp_path), "--tiers", "1"]) == 2
    (tmp_path / "heldout" / "en-001.yaml").rename(tmp_path / "heldout" / "en-002.yaml")
    text = (tmp_path / "heldout" / "en-002.yaml").read_text(encoding="utf-8")
    (tmp_path / "heldout" / "en-002.yaml").write_text(
        text.replace("id: en-001", "id: en-002"), encoding="utf-8"
    )
    assert bench_main(["--corpus", str(tmp_path), "--misses", "contradiction"]) == 2
    capsys.readouterr()
    out = tmp_path / "figures.json"
    assert bench_main(["--corpus", str(tmp_path), "--tiers", "1,judge", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "fake judge answering no findings: plumbing check only" in printed
    figures = json.loads(out.read_text(encoding="utf-8"))
    dev = figures["settings"]["1"]["dev"]
    assert dev["axes"]["contradiction"]["recall"] == 1.0
    assert dev["axes"]["contradiction"]["precision"] == 1.0
    assert set(figures["settings"]["judge"]) == {"dev", "heldout"}
    assert "4" in printed.split("tiers judge, dev")[1].split("\n")[0]  # tier 4 ran
