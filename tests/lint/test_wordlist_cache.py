"""The on-disk tries of wordfreq's lists: built once, reused, and never a wrong answer."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.lint import wordlist_cache, wordlists

wordfreq = pytest.importorskip("wordfreq")
pytest.importorskip("marisa_trie")
pytest.importorskip("platformdirs")

# Croatian: wordfreq's smallest list, so the tests that build tries stay quick.
CODE = "sh"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setattr(wordlist_cache, "cache_folder", lambda: folder)
    wordlists._list_index.cache_clear()
    yield folder
    wordlists._list_index.cache_clear()


# Captured before any test's spy, to read the lists without counting it as the cache's read.
READ_LIST = wordlists.read_list


@pytest.fixture
def list_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every word list the lint reads (gzip + msgpack) from now on."""
    read: list[Path] = []

    def spy(path: Path) -> dict[str, int] | None:
        read.append(path)
        return READ_LIST(path)

    monkeypatch.setattr(wordlists, "read_list", spy)
    return read


def source(code: str = CODE) -> Path:
    path = wordlists._list_path(code)
    assert path is not None
    return path


def fresh_index(code: str = CODE) -> Any:
    wordlists._list_index.cache_clear()
    return wordlists._list_index(code)


def sample_words(code: str = CODE) -> list[str]:
    index = READ_LIST(source(code))
    assert index is not None
    words = random.Random(f"cache-{code}").sample(sorted(index), 2000)
    return [*words, "zzqxj", "nepostojecariječ"]  # and words in no list


def assert_wordfreqs_answers(code: str = CODE) -> None:
    words = sample_words(code)
    assert [
        w for w in words if wordlists.frequency(w, code) != wordfreq.word_frequency(w, code)
    ] == []


def test_the_first_lookup_builds_the_trie_and_later_ones_reuse_it(
    cache: Path, list_reads: list[Path]
) -> None:
    built = fresh_index()
    assert isinstance(built, dict)  # the process that built the trie keeps its dict
    assert list_reads == [source()]
    assert [p.name for p in cache.iterdir()] == [cache_file().name]
    reused = fresh_index()
    assert isinstance(reused, wordlist_cache.TrieBuckets)
    assert list_reads == [source()]  # not read again
    assert len(reused) == len(built)
    assert dict(reused.items()) == built
    assert_wordfreqs_answers()
    assert list_reads == [source()]


def cache_file() -> Path:
    path = wordlist_cache.cache_path(source())
    assert path is not None
    return path


CORRUPTIONS = {
    "empty": lambda data: b"",
    "truncated": lambda data: data[: len(data) // 2],
    "one byte changed": lambda data: data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
    "not a trie": lambda data: b"\0" * len(data),
    "digest only": lambda data: data[: wordlist_cache.DIGEST_BYTES],
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_corrupt_trie_is_rebuilt_with_the_same_answers(
    cache: Path, list_reads: list[Path], corruption: str
) -> None:
    expected = fresh_index()
    path = cache_file()
    path.write_bytes(CORRUPTIONS[corruption](path.read_bytes()))
    assert fresh_index() == expected
    assert len(list_reads) == 2  # the damaged file was not used: the list was read again
    assert isinstance(fresh_index(), wordlist_cache.TrieBuckets)  # and the file rewritten
    assert len(list_reads) == 2
    assert_wordfreqs_answers()


def test_an_unwritable_cache_folder_still_gives_the_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, list_reads: list[Path]
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    # A folder under a file cannot be made, even by root (whom permissions would not stop).
    monkeypatch.setattr(wordlist_cache, "cache_folder", lambda: blocker / "cache")
    try:
        assert isinstance(fresh_index(), dict)
        assert_wordfreqs_answers()
        assert isinstance(fresh_index(), dict)  # read from the list each time, no error
        assert len(list_reads) == 2
    finally:
        wordlists._list_index.cache_clear()


def test_without_marisa_trie_the_list_is_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wordlist_cache, "_marisa_trie", lambda: None)
    assert isinstance(fresh_index(), dict)
    assert_wordfreqs_answers()
    assert not cache.exists()


def test_a_changed_list_gets_a_new_trie_and_the_old_one_goes(cache: Path, tmp_path: Path) -> None:
    copy = tmp_path / source().name
    shutil.copy2(source(), copy)
    first = wordlist_cache.cached_buckets(copy, lambda: READ_LIST(copy))
    old = wordlist_cache.cache_path(copy)
    stat = copy.stat()
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a new release
    new = wordlist_cache.cache_path(copy)
    assert old is not None
    assert new is not None
    assert new != old
    second = wordlist_cache.cached_buckets(copy, lambda: READ_LIST(copy))
    assert isinstance(second, dict)  # rebuilt from the list, not the old file
    assert second == first
    assert sorted(cache.iterdir()) == [new]


def test_a_fresh_process_lints_without_reading_the_lists(tmp_path: Path) -> None:
    code = (
        "import sys, gzip; from polygon_voice.lint import lint; "
        "reads = []; real = gzip.open; "
        "gzip.open = lambda *a, **k: reads.append(a[0]) or real(*a, **k); "
        "lint('Always greet the caller by name. Never read out a card number.', max_tier=2); "
        "print(len(reads), 'msgpack' in sys.modules)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    outputs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
            check=True, env=env,
        ).stdout.split()
        for _ in range(2)
    ]  # fmt: skip
    assert outputs[0] == ["1", "True"]  # the first ever lint reads the English list once
    assert outputs[1] == ["0", "False"]  # the next process opens the trie instead
    assert list((tmp_path / "polygon-voice" / "wordfreq").glob("large_en-*.trie"))
