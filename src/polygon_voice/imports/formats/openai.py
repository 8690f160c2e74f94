"""OpenAI chat messages: a list of messages, or `{"messages": [...]}`.

`assistant` messages speak for the agent and may carry `tool_calls` (arguments as JSON text);
`tool` messages carry a result joined by `tool_call_id`; `user` messages are the caller;
`system` / `developer` messages are kept as metadata. There are no times in this format.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
    Speaker,
    check_counts,
    expect_type,
    json_args,
    json_result,
    show,
)
from polygon_voice.imports.formats._ids import content_id

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_ID_KEYS = ("id", "call_id", "conversation_id")


class OpenAIFormat:
    name = "openai"
    description = "OpenAI chat messages with tool_calls and tool results"

    def detect(self, record: object) -> bool:
        messages = _messages_of(record)
        if not messages or not isinstance(messages, list):
            return False
        return all(isinstance(m, dict) and _known_role(m.get("role")) for m in messages)

    def parse(self, record: object) -> ImportedCall:
        if isinstance(record, dict):
            raw = record.get("messages")
            prefix = "messages"
            meta = {k: v for k, v in record.items() if k != "messages" and k not in _ID_KEYS}
        elif isinstance(record, list):
            raw, prefix, meta = record, "", {}
        else:
            raise RecordError("", f"expected a list of chat messages, got {show(record)}")
        messages = expect_type(raw, list, prefix or "(record)")
        call = _Builder(prefix).build(messages)
        call.call_id = _call_id(record)
        call.metadata.update(meta)
        return check_counts(call)


def _known_role(role: object) -> TypeGuard[str]:
    # A role given as a list or an object must not reach the set lookup (it is unhashable).
    return isinstance(role, str) and role in ROLES


def _messages_of(record: object) -> object:
    if isinstance(record, dict):
        return record.get("messages")
    return record


def _call_id(record: object) -> str:
    if isinstance(record, dict):
        for key in _ID_KEYS:
            value = record.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                return str(value)
    return content_id("openai", record)


def message_text(content: object, where: str) -> str:
    """`content` as text: a string, null, or a list of parts whose `text` parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif not isinstance(part, dict):
                raise RecordError(f"{where}[{i}]", f"expected a content part, got {show(part)}")
        return "".join(texts)
    raise RecordError(where, f"expected text, got {show(content)}")


class _Builder:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.turns: list[ImportedTurn] = []
        self.tools: dict[str, ImportedToolCall] = {}
        self.system: list[str] = []

    def where(self, index: int, key: str = "") -> str:
        base = f"{self.prefix}[{index}]" if self.prefix else f"[{index}]"
        return f"{base}.{key}" if key else base

    def build(self, messages: list[Any]) -> ImportedCall:
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                raise RecordError(self.where(index), f"expected a message, got {show(message)}")
            self.add(index, message)
        metadata: dict[str, Any] = {"system": self.system} if self.system else {}
        return ImportedCall(
            call_id="",
            source_format="openai",
            turns=self.turns,
            tool_calls=list(self.tools.values()),
            metadata=metadata,
        )

    def add(self, index: int, message: dict[str, Any]) -> None:
        role = message.get("role")
        if not _known_role(role):
            raise RecordError(
                self.where(index, "role"),
                f"expected one of {', '.join(sorted(ROLES))}, got {show(role)}",
            )
        text = message_text(message.get("content"), self.where(index, "content"))
        if role in ("system", "developer"):
            self.system.append(text)
        elif role in ("tool", "function"):
            self.add_result(index, message, text)
        else:
            self.add_turn(index, message, role, text)

    def add_turn(self, index: int, message: dict[str, Any], role: str, text: str) -> None:
        extra = {k: v for k, v in message.items() if k not in ("role", "content", "tool_calls")}
        if text or role == "user":
            speaker: Speaker = "caller" if role == "user" else "agent"
            self.turns.append(ImportedTurn(speaker=speaker, text=text, extra=extra))
        calls = message.get("tool_calls")
        if calls is None:
            return
        if role != "assistant":
            raise RecordError(self.where(index, "tool_calls"), "only assistant messages call tools")
        for n, call in enumerate(expect_type(calls, list, self.where(index, "tool_calls"))):
            self.add_call(self.where(index, f"tool_calls[{n}]"), call)

    def add_call(self, where: str, call: object) -> None:
        if not isinstance(call, dict):
            raise RecordError(where, f"expected a tool call, got {show(call)}")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            raise RecordError(f"{where}.id", f"expected a tool call id, got {show(call_id)}")
        if call_id in self.tools:
            raise RecordError(f"{where}.id", f"tool call id {show(call_id)} is used twice")
        function = expect_type(call.get("function"), dict, f"{where}.function")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise RecordError(f"{where}.function.name", f"expected a tool name, got {show(name)}")
        args = json_args(function.get("arguments"), f"{where}.function.arguments")
        extra = {k: v for k, v in call.items() if k not in ("id", "function", "type")}
        after = len(self.turns) - 1 if self.turns else None
        self.tools[call_id] = ImportedToolCall(
            call_id=call_id, tool=name, args=args, after_turn=after, extra=extra
        )

    def add_result(self, index: int, message: dict[str, Any], text: str) -> None:
        key = message.get("tool_call_id")
        if message.get("role") == "function":  # the legacy shape: joined by name
            key = next(
                (c.call_id for c in self.tools.values() if c.tool == message.get("name")), key
            )
        call = self.tools.get(key) if isinstance(key, str) else None
        if call is None:
            raise RecordError(
                self.where(index, "tool_call_id"), f"no earlier tool call has the id {show(key)}"
            )
        call.result = json_result(text)


FORMAT = OpenAIFormat()
