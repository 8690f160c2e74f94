"""Where the database lives, and masking secrets in what is printed or stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.store import DB_ENV, StoreError, mask_url, resolve_db_url
from polygon_voice.store.urls import redact


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DB_ENV, raising=False)


def test_default_is_a_sqlite_file_under_cwd(tmp_path: Path) -> None:
    url = resolve_db_url(None, cwd=tmp_path)
    assert url == f"sqlite:///{tmp_path.resolve() / '.polygon' / 'polygon.db'}"
    assert (tmp_path / ".polygon").is_dir()


def test_env_var_is_used_when_no_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DB_ENV, "from-env.db")
    assert resolve_db_url(None, cwd=tmp_path) == f"sqlite:///{tmp_path.resolve() / 'from-env.db'}"
    monkeypatch.setenv(DB_ENV, "postgresql://u@h/db")
    assert resolve_db_url(None, cwd=tmp_path) == "postgresql://u@h/db"


def test_explicit_value_beats_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DB_ENV, "from-env.db")
    assert resolve_db_url("mine.db", cwd=tmp_path).endswith("/mine.db")


def test_empty_env_var_means_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DB_ENV, "")
    assert resolve_db_url(None, cwd=tmp_path).endswith("/.polygon/polygon.db")


def test_urls_are_used_as_is(tmp_path: Path) -> None:
    for url in ("sqlite:///x.db", "postgresql+psycopg://u:p@host:5432/db", "sqlite://"):
        assert resolve_db_url(url, cwd=tmp_path) == url


def test_relative_path_is_under_cwd_and_folders_are_created(tmp_path: Path) -> None:
    url = resolve_db_url("deep/er/results.db", cwd=tmp_path)
    assert url == f"sqlite:///{tmp_path.resolve() / 'deep' / 'er' / 'results.db'}"
    assert (tmp_path / "deep" / "er").is_dir()


def test_absolute_path_ignores_cwd(tmp_path: Path) -> None:
    target = tmp_path / "abs" / "r.db"
    assert resolve_db_url(str(target), cwd=Path("/nonexistent")) == f"sqlite:///{target}"


def test_memory(tmp_path: Path) -> None:
    assert resolve_db_url(":memory:", cwd=tmp_path) == "sqlite://"


def test_uncreatable_folder_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot create the folder"):
        resolve_db_url(str(blocker / "sub" / "polygon.db"), cwd=tmp_path)


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://polygon:s3cret@db:5432/r", "postgresql://polygon:***@db:5432/r"),
        ("postgresql+psycopg://u:p%40ss@h/db", "postgresql+psycopg://u:***@h/db"),
        (
            "postgresql://u@h/db?password=x&sslmode=require",
            "postgresql://u@h/db?password=***&sslmode=require",
        ),
        ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
        ("http://u@h/p", "http://u@h/p"),
    ],
)
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def test_redact_keeps_ordinary_values() -> None:
    value = {"max_tokens": 5, "tokens": ["a"], "model": "m", "api_key": None, "nested": [{"x": 1}]}
    assert redact(value) == value
    assert redact({"OPENAI_API_KEY": "sk-1", "client_secret": "s"}) == {
        "OPENAI_API_KEY": "***",
        "client_secret": "***",
    }
