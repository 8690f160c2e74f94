"""Two plain-text formats: a CSV file of turns, and `Speaker: text` lines.

CSV: a header with a speaker column (`speaker` or `role`) and a text column (`text`,
`content`, `message` or `utterance`), optional `start` / `end` (seconds) and `call_id`; rows
with a `call_id` are grouped into one call per id (`split`). Lines: each `Name: text` line
starts a turn, a line without a name continues the previous turn, blank lines are skipped.

Speakers: `agent`, `assistant`, `bot` (and a few more) are the agent, `caller`, `user`,
`customer`, `human` the caller; with an agent label (`--agent-label`), that label is the
agent and every other speaker the caller.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, replace
from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedTurn,
    RecordError,
    Speaker,
    check_counts,
    optional_seconds,
    show,
)
from polygon_voice.imports.formats._ids import content_id

AGENT_NAMES = frozenset({"agent", "assistant", "bot", "ai", "system agent", "operator"})
CALLER_NAMES = frozenset({"caller", "user", "customer", "human", "client", "patient"})
SPEAKER_COLUMNS = ("speaker", "role")
TEXT_COLUMNS = ("text", "content", "message", "utterance", "transcript")
# A column `split` adds so that a group's rows keep their line numbers in the original file.
LINE_COLUMN = "__line__"
_KNOWN_COLUMNS = frozenset(
    {*SPEAKER_COLUMNS, *TEXT_COLUMNS, "start", "end", "call_id", LINE_COLUMN}
)
_LINE = re.compile(r"^\s*([^:\n]{1,40}?)\s*:\s?(.*)$")


def map_speaker(name: str, agent_label: str | None, where: str) -> Speaker:
    """A speaker's name as agent or caller; an unknown name is an error that says what to do."""
    key = name.strip().casefold()
    if agent_label is not None:
        return "agent" if key == agent_label.strip().casefold() else "caller"
    if key in AGENT_NAMES:
        return "agent"
    if key in CALLER_NAMES:
        return "caller"
    raise RecordError(
        where,
        f"unknown speaker {show(name)}: use agent/assistant/bot or caller/user/customer/human, "
        "or name the agent's label with --agent-label",
    )


def _header(text: str) -> dict[str, int] | None:
    """The columns of a CSV header we understand, or None when it is not such a header."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    try:
        row = next(csv.reader([first]))
    except (csv.Error, StopIteration):
        return None
    columns = {name.strip().casefold(): i for i, name in enumerate(row)}
    has_speaker = any(c in columns for c in SPEAKER_COLUMNS)
    has_text = any(c in columns for c in TEXT_COLUMNS)
    return columns if has_speaker and has_text else None


def _rows(text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and the rows as dicts, each with its 1-based line in the file."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = [name.strip().casefold() for name in next(reader)]
        rows = []
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                raise RecordError(f"line {reader.line_num}", "more cells than the header has")
            rows.append((reader.line_num, dict(zip(header, row, strict=False))))
    except csv.Error as exc:
        raise RecordError(f"line {reader.line_num}", f"not valid CSV: {exc}") from exc
    except StopIteration as exc:
        raise RecordError("line 1", "the CSV file is empty") from exc
    return header, rows


def _first(row: dict[str, str], names: tuple[str, ...]) -> tuple[str, str]:
    for name in names:
        if name in row:
            return name, row[name]
    return names[0], ""


@dataclass
class CsvFormat:
    name: str = "csv"
    description: str = "CSV with speaker/role and text/content columns, optional start/end/call_id"
    agent_label: str | None = None

    def with_agent_label(self, label: str | None) -> CsvFormat:
        return replace(self, agent_label=label)

    def detect(self, record: object) -> bool:
        return isinstance(record, str) and _header(record) is not None

    def split(self, record: object) -> list[tuple[str, object]]:
        """One sub-record per `call_id` when the file has that column, else the record itself."""
        if not isinstance(record, str) or "call_id" not in (_header(record) or {}):
            return [("", record)]
        header, rows = _rows(record)
        groups: dict[str, list[list[str]]] = {}
        for line, row in rows:
            groups.setdefault(row.get("call_id", "").strip(), []).append(
                [row.get(name, "") for name in header] + [str(line)]
            )
        parts: list[tuple[str, object]] = []
        for call_id, group in groups.items():
            out = io.StringIO()
            writer = csv.writer(out)
            writer.writerow([*header, LINE_COLUMN])
            writer.writerows(group)
            parts.append((f"call_id {call_id}" if call_id else "no call_id", out.getvalue()))
        return parts

    def parse(self, record: object) -> ImportedCall:
        if not isinstance(record, str):
            raise RecordError("", f"expected CSV text, got {show(record)}")
        if _header(record) is None:
            raise RecordError("line 1", "expected a header with speaker/role and text columns")
        _header_names, rows = _rows(record)
        turns = [self._turn(line, row) for line, row in rows]
        ids = {row.get("call_id", "").strip() for _line, row in rows} - {""}
        if len(ids) > 1:
            raise RecordError("call_id", f"several calls in one record: {sorted(ids)[:5]}")
        call_id = ids.pop() if ids else content_id("csv", record)
        return check_counts(ImportedCall(call_id=call_id, source_format="csv", turns=turns))

    def _turn(self, line: int, row: dict[str, str]) -> ImportedTurn:
        original = row.get(LINE_COLUMN, "")
        where = f"line {original if original.isdigit() else line}"
        speaker_col, speaker = _first(row, SPEAKER_COLUMNS)
        _text_col, text = _first(row, TEXT_COLUMNS)
        start = optional_seconds(row.get("start") or None, f"{where}.start")
        end = optional_seconds(row.get("end") or None, f"{where}.end")
        extra: dict[str, Any] = {
            k: v for k, v in row.items() if k not in _KNOWN_COLUMNS and k and v != ""
        }
        return ImportedTurn(
            speaker=map_speaker(speaker, self.agent_label, f"{where}.{speaker_col}"),
            text=text.strip(),
            start=start,
            end=end,
            extra=extra,
        )


@dataclass
class LinesFormat:
    name: str = "lines"
    description: str = "plain `Speaker: text` lines"
    agent_label: str | None = None

    def with_agent_label(self, label: str | None) -> LinesFormat:
        return replace(self, agent_label=label)

    def detect(self, record: object) -> bool:
        if not isinstance(record, str):
            return False
        for line in record.splitlines()[:50]:
            if line.strip():
                return _LINE.match(line) is not None
        return False

    def parse(self, record: object) -> ImportedCall:
        if not isinstance(record, str):
            raise RecordError("", f"expected text lines, got {show(record)}")
        turns: list[ImportedTurn] = []
        for number, line in enumerate(record.splitlines(), start=1):
            if not line.strip():
                continue
            match = _LINE.match(line)
            if match is None or (turns and not self._is_speaker(match.group(1))):
                if not turns:
                    raise RecordError(f"line {number}", "expected `Speaker: text`")
                turns[-1].text = f"{turns[-1].text}\n{line.strip()}".strip()
                continue
            speaker = map_speaker(match.group(1), self.agent_label, f"line {number}.speaker")
            turns.append(ImportedTurn(speaker=speaker, text=match.group(2).strip()))
        if not turns:
            raise RecordError("", "no `Speaker: text` line in the record")
        call_id = content_id("lines", record)
        return check_counts(ImportedCall(call_id=call_id, source_format="lines", turns=turns))

    def _is_speaker(self, name: str) -> bool:
        """Whether `name:` starts a new turn (else the colon is inside a continued line)."""
        key = name.strip()
        return len(key.split()) <= 3 and key[:1].isalpha()


CSV_FORMAT = CsvFormat()
LINES_FORMAT = LinesFormat()
FORMAT = CSV_FORMAT
