"""Opening a database that cannot be used gives a StoreError fit for the user, never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from polygon_voice.store import Store, StoreError


def test_unwritable_location(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    url = f"sqlite:///{blocker / 'polygon.db'}"
    with pytest.raises(StoreError) as caught:
        Store(url)
    message = str(caught.value)
    assert message.startswith(f"cannot open the results database {url}: ")
    assert "unable to open database file" in message
    assert "writable" in message
    assert "POLYGON_DB" in message
    assert "Traceback" not in message


def test_not_a_database_file(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a database"):
        Store(f"sqlite:///{bogus}")


def test_not_a_url() -> None:
    with pytest.raises(StoreError, match="is not a database URL"):
        Store("::::")


def test_unknown_database_kind() -> None:
    with pytest.raises(StoreError, match="unknown database kind 'nosuchdb'"):
        Store("nosuchdb://u:pw@h/db")


def test_missing_postgres_driver_says_to_install_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A None entry makes `import psycopg` fail, as on a machine without the extra.
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError) as caught:
        Store("postgresql://polygon:s3cret@localhost/results")
    message = str(caught.value)
    assert "pip install 'polygon-voice[postgres]'" in message
    assert "polygon:***@localhost" in message
    assert "s3cret" not in message


def test_unreachable_postgres_masks_the_password() -> None:
    pytest.importorskip("psycopg", reason="needs the postgres extra (psycopg)")
    with pytest.raises(StoreError) as caught:
        Store("postgresql://polygon:s3cret@127.0.0.1:1/results?connect_timeout=5")
    message = str(caught.value)
    assert "cannot open the results database postgresql://polygon:***@127.0.0.1:1/" in message
    assert "server is running" in message
    assert "s3cret" not in message
