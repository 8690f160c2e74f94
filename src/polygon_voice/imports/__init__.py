"""Importing real calls: production transcripts in, as ordinary stored runs.

`base` holds the shared shapes (`ImportedCall`, `RecordError`, `Format`); `formats` the parsers,
one module per source system; `reader` turns paths into records, `detect` picks a format,
`convert` turns an `ImportedCall` into a `ConversationResult` and `run` stores them as a run.
"""

from __future__ import annotations

from polygon_voice.imports.base import (
    Format,
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
    Speaker,
)

__all__ = [
    "Format",
    "ImportedCall",
    "ImportedToolCall",
    "ImportedTurn",
    "RecordError",
    "Speaker",
]
