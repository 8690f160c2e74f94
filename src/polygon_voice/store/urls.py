"""Where the results database lives, and keeping secrets out of what is printed or stored."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from polygon_voice.store.errors import StoreError

DB_ENV = "POLYGON_DB"
DEFAULT_DB = Path(".polygon") / "polygon.db"
MASK = "***"

# user:password@ in any scheme://; the password may not contain an unescaped "@" or "/".
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*:)[^\s@/]*@")
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&](?:password|passwd|pwd|api_key|apikey|token|secret|access_token)=)[^&\s#]*",
    re.IGNORECASE,
)
_SECRET_KEYS = frozenset(
    {"api_key", "apikey", "password", "passwd", "secret", "token", "authorization"}
)
_SECRET_SUFFIXES = ("_api_key", "_apikey", "_password", "_secret", "_token", "-api-key")


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


def mask_url(url: str) -> str:
    """`url` with any password (in user:password@ or in the query) replaced by ***."""
    masked = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK + "@", url)
    return _QUERY_SECRET.sub(lambda m: m.group("head") + MASK, masked)


def is_secret_key(key: str) -> bool:
    """Whether a config key names a credential (api_key, password, *_token, ...)."""
    lowered = key.lower()
    return lowered in _SECRET_KEYS or lowered.endswith(_SECRET_SUFFIXES)


def redact(value: Any) -> Any:
    """A copy of JSON-like `value` with credentials masked: secret-named keys and URL passwords."""
    if isinstance(value, dict):
        return {key: MASK if _is_secret(key, item) else redact(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return mask_url(value)
    return value


def _is_secret(key: object, value: Any) -> bool:
    # Only non-empty strings are masked, so `max_tokens: 100` or `api_key: null` stay readable.
    return isinstance(key, str) and is_secret_key(key) and isinstance(value, str) and value != ""
