"""Keeping credentials out of everything Polygon stores, prints or reports.

URLs carry them in two places: the password of `user:password@` and key-like query parameters
(`?api_key=`, `key=`, `token=`, `sig=`, ...). Requests are made with the real URL, held in
memory only; everything else gets the masked form. Standard library only, so any stage can
use it without loading the database layer.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

MASK = "***"

# user:password@ in any scheme://; the password may not contain an unescaped "@" or "/".
# The look-behind makes a scheme start only at a word's start: without it every position of
# a long word would be tried as one, quadratic in its length.
_URL_PASSWORD = re.compile(
    r"(?P<head>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*:)[^\s@/]*@"
)
# A query or fragment parameter whose name says it carries a credential: the exact names
# below, or any name ending in one of the suffixes (x-amz-signature, refresh_token, ...).
_QUERY_SECRET_NAMES = (
    "password|passwd|pwd|key|apikey|api[_-]?key|token|secret|sig|signature|auth|"
    "access[_-]?token|credential|credentials|code|client[_-]?secret|"
    r"[a-z0-9_.\-]{0,64}?[_\-.](?:key|token|secret|signature|sig|password|credential)"
)
_QUERY_SECRET = re.compile(
    rf"(?P<head>[?&#;](?:{_QUERY_SECRET_NAMES})=)(?P<value>[^&\s#;'\"<>]*)",
    re.IGNORECASE,
)
# Secrets shorter than this are not searched for as plain text: masking every "a" in a
# message would garble it, and the URL forms above are masked whatever their length.
MIN_SECRET_LENGTH = 4
_SECRET_KEYS = frozenset(
    {"api_key", "apikey", "password", "passwd", "secret", "token", "authorization"}
)
_SECRET_SUFFIXES = ("_api_key", "_apikey", "_password", "_secret", "_token", "-api-key")


def mask_url(url: str) -> str:
    """`url` (or any text holding URLs) with credentials replaced by ***: the password of a
    user:password@ and the value of every key-like query parameter (api_key, token, sig, ...)."""
    if "://" not in url and "=" not in url:
        return url  # the common case, a plain name or path: nothing to look for
    masked = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK + "@", url)
    return _QUERY_SECRET.sub(lambda m: m.group("head") + (MASK if m.group("value") else ""), masked)


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials a URL carries (its password, its key-like query values), as written and
    decoded, longest first; to mask them wherever a library repeats them in another form."""
    found: set[str] = set()
    try:
        password = urlsplit(url).password
    except ValueError:  # a malformed port or netloc: the regex forms are still masked
        password = None
    if password:
        found.update((password, unquote(password)))
    for match in _QUERY_SECRET.finditer(url):
        value = match.group("value")
        found.update((value, unquote_plus(value)))
    return tuple(sorted((s for s in found if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True))


def mask_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with each of `secrets` (see url_secrets) and every URL credential masked."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return mask_url(text)


def without_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """`url` without its user:password@, and the (user, password) it carried (decoded).

    For clients that must send credentials as an Authorization header rather than in the URL.
    """
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    netloc = parts.netloc.rpartition("@")[2]
    login = (unquote(parts.username or ""), unquote(parts.password or ""))
    return urlunsplit(parts._replace(netloc=netloc)), login


def authorization(base_url: str, key: str | None, no_key: str) -> str:
    """The Authorization header value for a request outside the SDK: the key as a bearer
    token, else the URL's own user:password as Basic credentials, else `no_key` (local
    servers ignore it; an empty header would make some proxies answer 400)."""
    _, login = without_userinfo(base_url)
    if key is None and login is not None:
        token = base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode()
        return f"Basic {token}"
    return f"Bearer {key or no_key}"


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
