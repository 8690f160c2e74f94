"""The README's test command: what `python3 dev.py test` includes."""

from __future__ import annotations

from dev import wants_real_llm


def test_the_whole_suite_includes_the_real_server_test() -> None:
    assert wants_real_llm({}, []) is True
    assert wants_real_llm({"CI": "true"}, []) is True


def test_it_is_left_out_when_switched_off_or_when_pytest_is_narrowed() -> None:
    assert wants_real_llm({"POLYGON_REAL_LLM": "0"}, []) is False
    # `dev.py test -k engine` runs what it names, nothing more.
    assert wants_real_llm({}, ["-k", "engine"]) is False
