"""Where the results database lives; credential masking comes from polygon_voice.masking."""

from __future__ import annotations

import os
from pathlib import Path

from polygon_voice.masking import MASK, is_secret_key, mask_secrets, mask_url, redact, url_secrets
from polygon_voice.store.errors import StoreError

DB_ENV = "POLYGON_DB"
DEFAULT_DB = Path(".polygon") / "polygon.db"
__all__ = [
    "DB_ENV",
    "DEFAULT_DB",
    "MASK",
    "is_secret_key",
    "mask_secrets",
    "mask_url",
    "redact",
    "resolve_db_url",
    "url_secrets",
]


def resolve_db_url(value: str | None, cwd: Path | None = None) -> str:
    """The database URL for `value`, else $POLYGON_DB, else `.polygon/polygon.db` under `cwd`."""
    base = Path.cwd() if cwd is None else cwd
    chosen = value or os.environ.get(DB_ENV) or str(DEFAULT_DB)
    if "://" in chosen:
        return chosen
    if chosen == ":memory:":
        return "sqlite://"
    path = Path(chosen).expanduser()
    if not path.is_absolute():
        path = base / path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the folder {path.parent} for the results database {path}: "
            f"{exc.strerror or exc}. Choose another place with --db or {DB_ENV}."
        ) from exc
    return f"sqlite:///{path.resolve().as_posix()}"
