"""LiveKit Agents: `session.history.to_dict()` (`{"items": [...]}`) and the session report
(`SessionReport.to_dict()`, whose history is under `chat_history`).

Items are discriminated by `type`: `message` (role `user` is the caller, `assistant` the agent;
`interrupted: true` marks a barge-in), `function_call` and `function_call_output` (joined by
`call_id`), `agent_handoff` and `agent_config_update` (kept as events). `created_at` is epoch
seconds and is dropped by `to_dict()` unless `exclude_timestamp=False` (the report keeps it);
times become seconds from the first item's `created_at`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedTurn,
    RecordError,
    check_counts,
    join_path,
    optional_seconds,
    show,
)
from polygon_voice.imports.formats._vendor import (
    RecordFormat,
    ToolJoin,
    as_object,
    content_id,
    flag,
    identifier,
    item_list,
    last_turn,
    objects,
    required_text,
    unmapped,
)

NAME = "livekit"
ITEM_TYPES = ("message", "function_call", "function_call_output", "agent_handoff")
SPEAKERS = {"user": "caller", "assistant": "agent"}
ID_KEYS = ("room_id", "job_id", "room")


def detect(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    history = record.get("chat_history")
    if isinstance(history, dict):
        return isinstance(history.get("items"), list)
    items = record.get("items")
    if not isinstance(items, list) or "pagination_key" in record or "has_more" in record:
        return False
    first = items[0] if items else None
    return isinstance(first, dict) and first.get("type") in ITEM_TYPES


def parse(record: object) -> ImportedCall:
    top = as_object(record, "(record)")
    history, base = top, ""
    if "chat_history" in top:
        history, base = as_object(top["chat_history"], "chat_history"), "chat_history"
    items_path = join_path(base, "items")
    items = item_list(history.get("items"), items_path)
    walk = _History(_first_time(items, items_path))
    for where, item in objects(items, items_path):
        walk.add(item, where)
    metadata = unmapped(top, ["chat_history"] if base else ["items"])
    if base:
        metadata["chat_history"] = unmapped(history, ["items"])
    if walk.events:
        metadata["events_in_history"] = walk.events
    if walk.system:
        metadata["system_messages"] = walk.system
    return check_counts(
        ImportedCall(
            call_id=_call_id(top),
            source_format=NAME,
            turns=walk.turns,
            tool_calls=walk.tools.finished(),
            started_at=_epoch(walk.origin),
            duration=walk.latest,
            metadata=metadata,
        )
    )


def _call_id(top: dict[str, Any]) -> str:
    """The report's room or job id; a bare history carries none, so a digest of it stands in."""
    for key in ID_KEYS:
        if top.get(key) not in (None, ""):
            return identifier(top[key], key)
    return content_id(NAME, top)


def _first_time(items: list[Any], where: str) -> float | None:
    """The earliest `created_at`: the call's start, from which turn times are measured."""
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("created_at") is not None:
            return optional_seconds(
                item["created_at"], join_path(join_path(where, index), "created_at")
            )
    return None


def _epoch(value: float | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


class _History:
    """The items walked in order into turns, tool calls and events."""

    def __init__(self, origin: float | None) -> None:
        self.origin = origin
        self.latest: float | None = None
        self.turns: list[ImportedTurn] = []
        self.tools = ToolJoin()
        self.events: list[dict[str, Any]] = []
        self.system: list[dict[str, Any]] = []

    def offset(self, value: object, where: str) -> float | None:
        """An epoch-seconds time as seconds from the call's start."""
        epoch = optional_seconds(value, where)
        if epoch is None or self.origin is None:
            return None
        moment = round(max(0.0, epoch - self.origin), 3)  # epoch floats carry noise below 1 ms
        self.latest = moment if self.latest is None else max(self.latest, moment)
        return moment

    def add(self, item: dict[str, Any], where: str) -> None:
        kind = required_text(item.get("type"), join_path(where, "type"))
        if kind == "message":
            self._message(item, where)
        elif kind == "function_call":
            self._call(item, where)
        elif kind == "function_call_output":
            self._output(item, where)
        else:  # agent_handoff, agent_config_update and types not known yet: kept in order
            self.events.append({"after_turn": last_turn(self.turns), **item})

    def _message(self, item: dict[str, Any], where: str) -> None:
        role = required_text(item.get("role"), join_path(where, "role"))
        spoken, parts = _content(item.get("content"), join_path(where, "content"))
        if role not in SPEAKERS:  # system / developer instructions, not speech
            self.system.append(item)
            return
        start, end = self._speech_times(item, where)
        extra = unmapped(item, ["type", "role", "content", "interrupted"])
        if parts:
            extra["content_parts"] = parts
        self.turns.append(
            ImportedTurn(
                speaker="caller" if SPEAKERS[role] == "caller" else "agent",
                text=spoken,
                start=start,
                end=end,
                interrupted=flag(item.get("interrupted"), join_path(where, "interrupted")),
                extra=extra,
            )
        )

    def _speech_times(self, item: dict[str, Any], where: str) -> tuple[float | None, float | None]:
        """When speech started and stopped (from `metrics`), else when the item was created."""
        created = self.offset(item.get("created_at"), join_path(where, "created_at"))
        metrics = item.get("metrics")
        if not isinstance(metrics, dict):
            return created, None
        metrics_path = join_path(where, "metrics")
        started = self.offset(
            metrics.get("started_speaking_at"), join_path(metrics_path, "started_speaking_at")
        )
        stopped = self.offset(
            metrics.get("stopped_speaking_at"), join_path(metrics_path, "stopped_speaking_at")
        )
        return (created if started is None else started), stopped

    def _call(self, item: dict[str, Any], where: str) -> None:
        self.tools.request_of(
            item,
            where,
            ("call_id", "name", "arguments"),
            start=self.offset(item.get("created_at"), join_path(where, "created_at")),
            after_turn=last_turn(self.turns),
            extra=unmapped(item, ["type", "call_id", "name", "arguments", "created_at"]),
        )

    def _output(self, item: dict[str, Any], where: str) -> None:
        tool_call = self.tools.result_of(
            item, where, id_key="call_id", name_key="name", result_key="output",
            after_turn=last_turn(self.turns),
        )  # fmt: skip
        tool_call.end = self.offset(item.get("created_at"), join_path(where, "created_at"))
        if flag(item.get("is_error"), join_path(where, "is_error")):
            output = item.get("output")
            tool_call.error = output if isinstance(output, str) and output else show(output, 500)
        kept = unmapped(item, ["type", "call_id", "name", "output", "is_error", "created_at"])
        if kept:
            tool_call.extra["output_item"] = kept


def _content(value: object, where: str) -> tuple[str, list[Any]]:
    """The spoken text (string parts joined) and the other parts (images, audio), kept apart."""
    if value is None:
        return "", []
    if isinstance(value, str):
        return value, []
    if not isinstance(value, list):
        raise RecordError(where, f"expected a list of content parts, got {show(value)}")
    spoken = [part for part in value if isinstance(part, str)]
    others = [part for part in value if not isinstance(part, str)]
    return " ".join(part.strip() for part in spoken if part.strip()), others


FORMAT = RecordFormat(
    name=NAME,
    description="LiveKit Agents session history (items) and session reports",
    detector=detect,
    parser=parse,
)
