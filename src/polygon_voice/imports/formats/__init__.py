"""The import formats, in detection order: the most specific shapes first.

Each module defines one module-level `FORMAT`; `--format auto` asks each `detect` in this order.
Polygon's own records first (they are the most specific), then the vendors' call objects,
then the research corpora (tau-bench, SGD, Taskmaster, ABCD: each recognised by its own id
field; a tau-bench trajectory holds chat messages), then the generic shapes: OpenAI chat
messages (a Vapi call object carries chat messages too), CSV, and `Speaker: text` lines last
(almost any text has a colon).
"""

from __future__ import annotations

from polygon_voice.imports.base import Format
from polygon_voice.imports.formats import (
    abcd,
    csv_lines,
    deepgram,
    elevenlabs,
    livekit,
    openai,
    polygon,
    retell,
    sgd,
    taskmaster,
    taubench,
    twilio,
    vapi,
)

FORMATS: tuple[Format, ...] = (
    polygon.FORMAT,
    vapi.FORMAT,
    retell.FORMAT,
    livekit.FORMAT,
    elevenlabs.FORMAT,
    twilio.FORMAT,
    deepgram.FORMAT,
    taubench.FORMAT,
    sgd.FORMAT,
    taskmaster.FORMAT,
    abcd.FORMAT,
    openai.FORMAT,
    csv_lines.CSV_FORMAT,
    csv_lines.LINES_FORMAT,
)


def format_names() -> list[str]:
    return [fmt.name for fmt in FORMATS]


def find_format(name: str) -> Format | None:
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    return None
