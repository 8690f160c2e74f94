"""The fake LLM server's script: rules matched in order, each with one kind of answer."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ANSWER_KINDS = ("text", "json", "tool_calls", "error", "hang", "reset", "raw", "logprobs")
ROLE_MARKER = re.compile(r"polygon-role:\s*(\w+)")


class ToolCallSpec(BaseModel):
    """A tool call to answer with; `arguments` as an object or as a JSON string."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class Rule(BaseModel):
    """Match conditions (all given ones must hold) and one answer.

    Matching: `role` (the X-Polygon-Role header, else a `polygon-role: NAME` marker in the
    system prompt), `model`, `call` (the n-th request of that role, from 1, retries included),
    `turn` (the number of user messages), `contains` / `regex` (the last user message),
    `structured` (whether the request asks for a JSON schema), `last_role` (the role of the
    request's last message: `user`, or `tool` / `developer` when a tool result came back, as
    frameworks such as Pipecat send it), `temperature_above` / `temperature_at_most` (the
    request's sampling temperature; a request that sends none matches neither, since the
    default differs between servers). `times` limits how often the
    rule answers. Answers: `text` (with or without `tool_calls`), `json`, `tool_calls`,
    `error` (an HTTP status, with `retry_after` and `message`), `hang` (seconds of silence,
    then the connection closes), `reset` (true: the connection is reset at once, a TCP RST,
    with no answer), `raw` (a response body sent as is: malformed JSON, say),
    `logprobs` (for POST /completions with `echo`: the prompt's log-probabilities, per word
    token; "*" gives the rest, default -1.0; `logprobs_shift` n reports each value n tokens
    late, as a server with llama.cpp-server's alignment bug does).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    role: str | None = None
    model: str | None = None
    call: int | None = Field(default=None, ge=1)
    turn: int | None = Field(default=None, ge=0)
    contains: str | None = None
    regex: str | None = None
    structured: bool | None = None
    last_role: str | None = None
    temperature_above: float | None = Field(default=None, ge=0)
    temperature_at_most: float | None = Field(default=None, ge=0)
    times: int | None = Field(default=None, ge=1)
    text: str | None = None
    json_: Any = Field(default=None, alias="json")
    tool_calls: list[ToolCallSpec] | None = None
    error: int | None = Field(default=None, ge=400, le=599)
    retry_after: float | None = Field(default=None, ge=0)
    message: str | None = None
    hang: float | None = Field(default=None, gt=0)
    reset: bool | None = None
    raw: str | None = None
    logprobs: dict[str, float] | None = None
    logprobs_shift: int = Field(default=0, ge=0)
    latency: float | None = Field(default=None, ge=0)
    tokens_in: int | None = Field(default=None, ge=0)
    tokens_out: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_answer(self) -> Rule:
        given = [kind for kind in ANSWER_KINDS if self.answer(kind) is not None]
        if not given:
            raise ValueError(f"a rule needs an answer: one of {', '.join(ANSWER_KINDS)}")
        if len(given) > 1 and set(given) != {"text", "tool_calls"}:
            raise ValueError(f"a rule has one answer, got {' and '.join(given)}")
        if self.retry_after is not None and self.error is None:
            raise ValueError("retry_after goes with error")
        if self.regex is not None:
            re.compile(self.regex)
        above, at_most = self.temperature_above, self.temperature_at_most
        if above is not None and at_most is not None and above >= at_most:
            raise ValueError("temperature_above must be below temperature_at_most")
        return self

    def answer(self, kind: str) -> Any:
        """The value given for one answer kind (None when absent)."""
        return self.json_ if kind == "json" else getattr(self, kind)

    def matches(self, request: ScriptedRequest) -> bool:
        """Whether every condition this rule gives holds for `request`."""
        # Cheapest first, and what a request yields is read only when a condition needs it.
        return (
            (self.role is None or self.role == request.role)
            and (self.model is None or self.model == request.body.get("model"))
            and (self.call is None or self.call == request.call)
            and (self.turn is None or self.turn == request.turn)
            and (self.contains is None or self.contains in request.last_user)
            and (self.regex is None or re.search(self.regex, request.last_user) is not None)
            and (self.structured is None or self.structured == request.structured)
            and (self.last_role is None or self.last_role == request.last_role)
            and self._temperature_holds(request)
        )

    def _temperature_holds(self, request: ScriptedRequest) -> bool:
        if self.temperature_above is None and self.temperature_at_most is None:
            return True
        temperature = request.temperature
        if temperature is None:
            return False
        above = self.temperature_above
        at_most = self.temperature_at_most
        return (above is None or temperature > above) and (
            at_most is None or temperature <= at_most
        )


class Script(BaseModel):
    """Rules tried in order, and the latency of every answer (a rule may set its own)."""

    model_config = ConfigDict(extra="forbid")

    rules: list[Rule] = Field(default_factory=list)
    latency: float = Field(default=0.0, ge=0)


def load_script(path: str | Path) -> Script:
    """A script from a YAML or JSON file; errors name the file, the rule and the field."""
    # Imported here: the scenario package is not needed to import the fake server.
    from polygon_voice.scenario.errors import SuiteError
    from polygon_voice.scenario.parsing import read_data

    path = Path(path)
    try:
        data = read_data(path, str(path))[0]  # bounded aliases, depth and sizes, like suites
    except SuiteError as exc:
        raise ValueError(f"cannot read the script: {exc}") from None
    try:
        return Script.model_validate(data or {})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "(top)"
        message = error["msg"].removeprefix("Value error, ")
        raise ValueError(f"{path}: {where}: {message}") from None


@dataclass(frozen=True)
class ScriptedRequest:
    """What a rule is matched against."""

    role: str
    call: int
    body: dict[str, Any]

    # Cached: every rule tried asks again, and the body does not change.
    @cached_property
    def last_user(self) -> str:
        """The text of the last user message ('' when there is none)."""
        for message in reversed(self.body.get("messages") or []):
            if isinstance(message, dict) and message.get("role") == "user":
                return _text(message.get("content"))
        return ""

    @cached_property
    def turn(self) -> int:
        """The number of user messages in the request."""
        messages = self.body.get("messages") or []
        return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "user")

    @property
    def last_role(self) -> str:
        """The role of the request's last message ('' when there is none)."""
        messages = self.body.get("messages") or []
        last = messages[-1] if messages else None
        return str(last.get("role", "")) if isinstance(last, dict) else ""

    @property
    def temperature(self) -> float | None:
        """The request's sampling temperature (None when it sends none or not a number)."""
        value = self.body.get("temperature")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)

    @property
    def structured(self) -> bool:
        """Whether the request asks for JSON (a json_schema or json_object response format)."""
        return isinstance(self.body.get("response_format"), dict)


class ScriptState:
    """Thread-safe bookkeeping: calls per role and how often each rule has answered."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self._lock = threading.Lock()
        self._calls: dict[str, int] = {}
        self._used = [0] * len(script.rules)

    def pick(
        self, role: str, body: dict[str, Any], *, match: bool = True
    ) -> tuple[ScriptedRequest, int | None]:
        """Count the call and choose the first matching rule still in play (None: no rule).

        With `match` false the call is only counted: a request the server refuses uses no rule.
        """
        with self._lock:
            call = self._calls[role] = self._calls.get(role, 0) + 1
            request = ScriptedRequest(role=role, call=call, body=body)
            if not match:
                return request, None
            for index, rule in enumerate(self.script.rules):
                if rule.times is not None and self._used[index] >= rule.times:
                    continue
                if rule.matches(request):
                    self._used[index] += 1
                    return request, index
            return request, None


def role_of(header: str | None, body: dict[str, Any]) -> str:
    """The caller's role: the header, else a `polygon-role: NAME` marker in a system message."""
    if header:
        return header
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "system":
            found = ROLE_MARKER.search(_text(message.get("content")))
            if found:
                return found.group(1)
    return "unknown"


def _text(content: object) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content)
