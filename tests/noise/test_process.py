"""Across processes: the same heard text, nothing loaded until needed, no network, no extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polygon_voice.noise import (
    NoiseUnavailable,
    distort,
    hearing,
    require_dependencies,
)

ROOT = Path(__file__).resolve().parents[2]
CASES = [
    ("en", "My order number is 5590 and I need fifty boxes by Friday, please."),
    ("de", "Meine Bestellnummer ist 5590, ich brauche fünfzig Kartons bis Freitag."),
    ("hr", "Moj kod je 5590 i trebam pedeset kutija do petka, hvala."),
    ("ru", "Мой код 5590, мне нужно пятьдесят коробок к пятнице, спасибо."),
]
# Prints the heard records of CASES for a few levels and seeds, as JSON.
SCRIPT = """
import json, sys
from polygon_voice.noise import distort
cases = json.loads(sys.argv[1])
out = [distort(text, level, lang, seed).model_dump()
       for lang, text in cases for level in (0.3, 1.0) for seed in (0, 7, 2**63 + 5)]
print(json.dumps(out, ensure_ascii=False))
"""


def run_python(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    return done.stdout


def test_another_process_with_another_hash_seed_hears_the_same() -> None:
    here = [
        distort(text, level, lang, seed).model_dump()
        for lang, text in CASES
        for level in (0.3, 1.0)
        for seed in (0, 7, 2**63 + 5)
    ]
    cases = json.dumps(CASES)
    first = json.loads(run_python(SCRIPT, cases, env={"PYTHONHASHSEED": "1"}))
    second = json.loads(run_python(SCRIPT, cases, env={"PYTHONHASHSEED": "4242"}))
    assert first == second == here
    assert any(record["edits"] for record in here)


def test_importing_noise_loads_no_word_list_nor_library() -> None:
    code = """
import sys
import polygon_voice.noise as noise
from polygon_voice.noise import hearing
from polygon_voice.conversation import clear_line
assert hearing(0) is clear_line
assert hearing(0)("Hello 5590", "en", 1) == "Hello 5590"
heavy = ("wordfreq", "num2words", "jellyfish", "jiwer", "polygon_voice.noise.lexicon")
print(sorted(name for name in heavy if name in sys.modules))
"""
    assert run_python(code).strip() == "[]"


def test_word_lists_load_without_any_network() -> None:
    code = """
import socket

def refuse(*args, **kwargs):
    raise AssertionError("network used")

socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from polygon_voice.noise import distort
from polygon_voice.noise.lexicon import lexicon
for lang in ("en", "de", "hr", "ru"):
    assert len(lexicon(lang).words) > 30000
    distort("code 5590 fifty", 1.0, lang, 3)
print("offline")
"""
    assert run_python(code).strip() == "offline"


def test_hearing_at_a_level_is_distort_without_the_record() -> None:
    hear = hearing(0.8)
    for lang, text in CASES:
        assert hear(text, lang, 11) == distort(text, 0.8, lang, 11).heard


def test_a_missing_extra_is_named_with_its_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    with pytest.raises(NoiseUnavailable, match=r"wordfreq.*pip install 'polygon-voice\[noise\]'"):
        require_dependencies()


def test_the_extra_is_installed_here() -> None:
    require_dependencies()
