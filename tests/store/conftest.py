"""Fixtures for the store tests: real SQLite files under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from polygon_voice.store import Store


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """A SQLite file that does not exist yet."""
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """An open store on a fresh SQLite file."""
    opened = Store(db_url)
    try:
        yield opened
    finally:
        opened.close()
