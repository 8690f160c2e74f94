"""The on-disk response cache: one file per request, named by the hash of the whole request.

Any change to the request (model, endpoint, messages, tools, schema, temperature, seed, ...)
gives another key, so a cached answer is only ever replayed for exactly the same request.
The API key is never part of the key nor of the stored value.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Bumped when the key's recipe or the stored value changes, so old entries are never misread.
CACHE_FORMAT = 1


def request_key(base_url: str, body: Mapping[str, Any]) -> str:
    """The sha256 of the canonical JSON of the endpoint and the full request body."""
    canonical = json.dumps(
        {"format": CACHE_FORMAT, "base_url": base_url.rstrip("/"), "body": body},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A directory of response bodies, `<dir>/<key[:2]>/<key>.json`, written atomically.

    Safe for many tasks and processes at once: a file appears whole (written to a temporary
    name, then renamed) or not at all, and two writers of one key write the same bytes.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> bytes | None:
        """The stored response body for `key`, or None."""
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None

    def put(self, key: str, body: bytes) -> None:
        """Store a response body under `key` (replacing any older one)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def discard(self, key: str) -> None:
        """Forget one entry (a stored body that no longer parses, say)."""
        self._path(key).unlink(missing_ok=True)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json"))
