"""Stable ids for records that carry none: the same content always gets the same id."""

from __future__ import annotations

import hashlib
import json


def content_id(prefix: str, record: object) -> str:
    """`prefix-` and 12 hex digits of the record's content hash (re-imports are duplicates)."""
    try:
        text = record if isinstance(record, str) else json.dumps(record, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(record)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{prefix}-{digest}"
