"""Polygon's own `transcripts.jsonl`: one stored conversation (ConversationResult JSON) a line.

The import keeps the conversation exactly as it was (the round trip is exact): the parsed
model travels in the ImportedCall's metadata under `POLYGON_CONVERSATION` and the converter
returns it unchanged.
"""

from __future__ import annotations

from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
    check_counts,
    join_path,
)

POLYGON_CONVERSATION = "polygon_conversation"
_KEYS = ("stage", "turns", "tool_calls", "trace", "end")


class PolygonFormat:
    name = "polygon"
    description = "Polygon's own transcripts.jsonl (a stored conversation per line)"

    def detect(self, record: object) -> bool:
        return (
            isinstance(record, dict)
            and record.get("stage") == "conversation"
            and all(key in record for key in _KEYS)
        )

    def parse(self, record: object) -> ImportedCall:
        from pydantic import ValidationError

        from polygon_voice.model import ConversationResult

        try:
            result = ConversationResult.model_validate(record)
        except ValidationError as exc:
            raise RecordError(*_first_error(exc.errors())) from None
        except (RecursionError, ValueError, TypeError) as exc:
            raise RecordError("", f"not a stored conversation: {exc}") from None
        turns = [
            ImportedTurn(
                speaker="agent" if t.speaker.value == "agent" else "caller",
                text=t.text,
                start=t.start,
                end=t.end,
                interrupted=t.interrupted,
            )
            for t in result.turns
        ]
        tools = [
            ImportedToolCall(
                call_id=c.call_id,
                tool=c.tool,
                args=c.args,
                result=c.result,
                error=c.error_message or (c.error.value if c.error else None),
            )
            for c in result.tool_calls
        ]
        call = ImportedCall(
            call_id=result.id,
            source_format=self.name,
            turns=turns,
            tool_calls=tools,
            language=result.language,
            ended_reason=result.end.reason.value,
            metadata={POLYGON_CONVERSATION: result},
        )
        return check_counts(call)


def _first_error(errors: list[Any]) -> tuple[str, str]:
    """The path and message of pydantic's first complaint, as a RecordError wants them."""
    if not errors:
        return "", "not a stored conversation"
    first = errors[0]
    where = ""
    for part in first.get("loc", ()):
        where = join_path(where, part if isinstance(part, int) else str(part))
    extra = f" ({len(errors) - 1} more)" if len(errors) > 1 else ""
    return where, f"{first.get('msg', 'invalid')}{extra}"


FORMAT = PolygonFormat()
