"""An agent defined by a YAML file: model, system prompt, sampling profile; Polygon runs it.

The suite's stub tools are offered to the model as function-calling schemas. The model's
text becomes `Say`, its tool calls `PrepareToolCall` + `SendToolCall`; a tool's answer goes
back as a `tool` message and the model is asked again. Two control functions, `end_call` and
`transfer_call`, let the model hang up or hand over (see docs/agents.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from polygon_voice.agents.base import AgentContext
from polygon_voice.llm import LLMClient, LLMConfigError, RoleConfig, load_llm_config
from polygon_voice.llm.capabilities import Capabilities, adopted
from polygon_voice.llm.errors import LLMError, LLMRequestError, ModelUnavailable
from polygon_voice.llm.reply import ChatReply
from polygon_voice.llm.usage import RequestActivity, Usage
from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
    EndCall,
    Event,
    PrepareToolCall,
    Say,
    SendToolCall,
    Silence,
    TimerFired,
    ToolError,
    ToolResult,
    ToolSpec,
    Transfer,
)
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.parsing import read_data
from polygon_voice.scenario.validation import validation_error
from polygon_voice.seeding import content_hash

log = logging.getLogger("polygon_voice.agents.prompt")

END_CALL = "end_call"
TRANSFER_CALL = "transfer_call"
# Answers that will not change within a run (a refused key, an unknown model): after the
# first, the other calls fail at once rather than each asking the endpoint again.
_FINAL_STATUSES = frozenset({401, 403, 404})
# Seeds every server takes: vLLM and Ollama refuse past int64, some servers past int32. The
# call's seed is reduced into this range, so it stays deterministic from the run's seed.
SEED_RANGE = 2**31
# Tool rounds (model answers that call a suite tool) before the agent stops calling tools.
# A tool answer is an event of its own, so `max_rounds` alone never stops a model that
# repeats the same failing call; these caps count across those events.
MAX_TOOL_ROUNDS_PER_TURN = 8
MAX_TOOL_ROUNDS_PER_CALL = 32
_CONTROL_TOOLS: dict[str, dict[str, Any]] = {
    END_CALL: {
        "description": "Hang up the call once the caller's request is handled or they say bye.",
        "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}},
    },
    TRANSFER_CALL: {
        "description": "Transfer the caller to a human or another line.",
        "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
    },
}


class PromptAgentError(Exception):
    """A prompt-agent configuration that cannot be loaded."""


class PromptAgentConfig(BaseModel):
    """The YAML file's content. Paths are relative to the file's folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_prompt: str = Field(description="file holding the system prompt (Markdown or text)")
    llm_config: str | None = Field(
        default=None, description="a Polygon config file whose llm.agent role is used"
    )
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="sampling profile: temperature, top_p, max_tokens, ... sent as given",
    )
    seed: bool = Field(default=True, description="send the call's derived seed to the model")
    control_tools: bool = Field(default=True, description="offer end_call and transfer_call")
    max_rounds: int = Field(default=4, ge=1, description="model calls per event at most")
    max_tool_rounds_per_turn: int = Field(
        default=MAX_TOOL_ROUNDS_PER_TURN,
        ge=1,
        description="tool rounds between two caller events; then the turn ends",
    )
    max_tool_rounds_per_call: int = Field(
        default=MAX_TOOL_ROUNDS_PER_CALL,
        ge=1,
        description="tool rounds in one call; then the agent hangs up",
    )


def _read_config(path: Path) -> PromptAgentConfig:
    """The agent file through the safe reader; errors name its line and field (did you mean)."""
    file = str(path)
    try:
        data, root = read_data(path, file)
        if not isinstance(data, dict):
            raise SuiteError(file, "an agent file is a mapping with at least 'system_prompt'")
        try:
            return PromptAgentConfig.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc, root, PromptAgentConfig, file) from None
    except SuiteError as exc:
        raise PromptAgentError(str(exc)) from None


class PromptAgentFactory:
    """Builds one `PromptAgent` per call; `describe()` is what a run records about it."""

    def __init__(
        self,
        path: str | Path,
        env: Mapping[str, str] | None = None,
        *,
        run_llm_config: Path | None = None,
    ) -> None:
        self.path = Path(path)
        # The run's `--llm-config`: its agent role is used when the file names no config.
        self._run_llm_config = run_llm_config
        self.config = _read_config(self.path)
        base = self.path.parent
        prompt_path = base / self.config.system_prompt
        try:
            self.system_prompt = prompt_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PromptAgentError(
                f"{self.path}: system_prompt {prompt_path}: cannot read: {exc.strerror}"
            ) from None
        except UnicodeDecodeError as exc:
            raise PromptAgentError(
                f"{self.path}: system_prompt {prompt_path}: not valid UTF-8 text "
                f"(byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
            ) from None
        self.role_config = self._role_config(base, env)
        # One client for every call of the run: it holds the connection pool and the usage.
        self._client: LLMClient | None = None
        self._env = env
        self._given_up: ModelUnavailable | None = None
        # Kept by the factory, not the client: the client is closed when the run ends,
        # and the run reads the agent role's usage after that.
        self.usage = Usage()
        # The model's requests as they happen (for progress bars), live before the first call.
        self.activity = RequestActivity()

    def _role_config(self, base: Path, env: Mapping[str, str] | None) -> RoleConfig:
        cfg = self.config
        llm_path = base / cfg.llm_config if cfg.llm_config is not None else self._run_llm_config
        try:
            role = load_llm_config(llm_path, env).role("agent")
            overrides = {
                key: value
                for key, value in (
                    ("model", cfg.model),
                    ("base_url", cfg.base_url),
                    ("api_key_env", cfg.api_key_env),
                )
                if value is not None
            }
            # The file's own settings win over the config file and the environment.
            role = RoleConfig.model_validate({**role.model_dump(), **overrides})
        except (LLMConfigError, ValidationError) as exc:
            raise PromptAgentError(f"{self.path}: model settings: {exc}") from None
        if not role.configured:
            raise PromptAgentError(
                f"{self.path}: no model: give `model:`, an `llm_config:` with llm.agent.model "
                "(or the run's --llm-config), or POLYGON_AGENT_MODEL"
            )
        return role

    @property
    def prompt_version(self) -> str:
        """The system prompt file's content hash."""
        return content_hash(self.system_prompt)

    @property
    def profile_hash(self) -> str:
        """The sampling profile's content hash (key order does not matter)."""
        return content_hash(json.dumps(self.config.params, sort_keys=True, default=str))

    @property
    def config_hash(self) -> str:
        """One hash over everything that shapes the agent's answers (never the API key)."""
        parts = {
            "config": self.config.model_dump(mode="json"),
            "prompt": self.prompt_version,
            "model": self.role_config.model,
            "base_url": self.role_config.base_url,
        }
        return content_hash(json.dumps(parts, sort_keys=True))

    def describe(self) -> dict[str, object]:
        """What a run stores so its results can be traced to this exact agent."""
        return {
            "agent_kind": "prompt",
            "agent_model": self.role_config.model,
            "agent_prompt_version": self.prompt_version,
            "agent_profile_hash": self.profile_hash,
            "agent_config_hash": self.config_hash,
        }

    def client(self) -> LLMClient:
        """The shared client, opened at the first call."""
        if self._client is None:
            self._client = LLMClient(
                self.role_config, env=self._env, activity=self.activity, usage=self.usage
            )
        return self._client

    async def ask(self, messages: list[dict[str, Any]], **options: Any) -> ChatReply:
        """One model turn; any failure of the model is raised as ModelUnavailable.

        The engine ends the call with `agent raised ModelUnavailable: ...`, which the run
        counts as the agent's model failing (infrastructure), not as the agent's behaviour.
        """
        if self._given_up is not None:
            raise ModelUnavailable(str(self._given_up))
        try:
            return await self.client().chat(messages, **options)
        except LLMError as exc:
            failure = ModelUnavailable(str(exc))
            if _final(exc):
                self._given_up = failure
            raise failure from None

    def __call__(self, context: AgentContext) -> PromptAgent:
        return PromptAgent(self, context)

    async def aclose(self) -> None:
        """Close the shared client's connections (the runner calls this when a run ends)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _final(exc: LLMError) -> bool:
    """Whether the failure would be the same for every call of the run."""
    if isinstance(exc, LLMConfigError):  # no key, no `llm` extra
        return True
    return isinstance(exc, LLMRequestError) and exc.status in _FINAL_STATUSES


def tool_schemas(tools: Mapping[str, ToolSpec], control: bool) -> list[dict[str, Any]]:
    """The suite's tools (plus the control functions) in the chat-completions `tools` shape."""
    functions: dict[str, dict[str, Any]] = {
        name: {"description": spec.description, "parameters": spec.parameters}
        for name, spec in tools.items()
    }
    if control:
        for name, schema in _CONTROL_TOOLS.items():
            # A suite tool of the same name is the real one: it is not shadowed.
            functions.setdefault(name, schema)
    return [
        {"type": "function", "function": {"name": name, **schema}}
        for name, schema in sorted(functions.items())
    ]


class PromptAgent:
    """One call's conversation with the model; the message history lives here."""

    def __init__(self, factory: PromptAgentFactory, context: AgentContext) -> None:
        self._factory = factory
        self._context = context
        self._tools = tool_schemas(context.tools, factory.config.control_tools)
        self._messages: list[dict[str, Any]] = [
            {"role": "system", "content": factory.system_prompt}
        ]
        # Calls the last assistant message made that still wait for their tool message.
        self._pending: list[str] = []
        # Tool rounds since the caller's last event, and in the whole call (see the caps).
        self._turn_rounds = 0
        self._call_rounds = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Add the event to the history, then ask the model until it waits for something."""
        if not self._record_event(event):
            return
        cfg = self._factory.config
        for _ in range(cfg.max_rounds):
            reply = await self._factory.ask(self._messages, **self._request_options())
            # Servers that send no id still need a unique one per call, the same in the
            # assistant message and in the tool message that answers it.
            ids = [call.id or f"call-{len(self._messages)}-{i}"
                   for i, call in enumerate(reply.tool_calls)]  # fmt: skip
            self._messages.append(_assistant_message(reply, ids))
            if reply.text:
                yield Say(text=reply.text)
            if self._calls_tools(reply) and (stop := self._over_cap(ids)) is not None:
                if isinstance(stop, EndCall):
                    yield stop
                return
            ask_again = False
            for call_id, call in zip(ids, reply.tool_calls, strict=True):
                if call.name not in self._context.tools:
                    if call.name == END_CALL and cfg.control_tools:
                        yield EndCall(reason=str(call.arguments.get("reason", "")))
                        return
                    if call.name == TRANSFER_CALL and cfg.control_tools:
                        yield Transfer(target=str(call.arguments.get("target") or "human"))
                        return
                    # Told to the model instead of sent: an unknown tool would end the call
                    # as a protocol error, which is the harness's mapping, not the model's.
                    self._tool_message(call_id, {"error": f"no tool named {call.name!r}"})
                    ask_again = True
                    continue
                self._pending.append(call_id)
                yield PrepareToolCall(call_id=call_id, tool=call.name, args=call.arguments)
                yield SendToolCall(call_id=call_id)
            if self._pending or not ask_again:
                return

    def _request_options(self) -> dict[str, Any]:
        cfg = self._factory.config
        role = self._factory.role_config
        found = adopted(role.base_url, role.model or "")
        params = dict(cfg.params)
        if self._tools and sends_tool_choice(role, found):
            # llama.cpp's server ignores tools unless tool_choice is given; the profile's own
            # tool_choice wins.
            params.setdefault("tool_choice", "auto")
        seeds = seed_range(role, found) if cfg.seed else None
        seed = self._context.seed % seeds if seeds else None
        return {"tools": self._tools or None, "seed": seed, "params": params}

    def _calls_tools(self, reply: ChatReply) -> bool:
        """Whether the reply is a tool round: it calls something other than end or transfer."""
        control = {END_CALL, TRANSFER_CALL} if self._factory.config.control_tools else set()
        return any(call.name not in control or call.name in self._context.tools
                   for call in reply.tool_calls)  # fmt: skip

    def _over_cap(self, ids: list[str]) -> EndCall | Literal["turn over"] | None:
        """Count the tool round, or at a cap answer its calls with the reason and stop
        (a round not carried out does not count).

        Returns None (go on), "turn over" (the turn ends, the caller speaks next) or the
        `EndCall` that ends the call.
        """
        cfg = self._factory.config
        if self._call_rounds >= cfg.max_tool_rounds_per_call:
            reason = (
                f"prompt agent: {cfg.max_tool_rounds_per_call} tool rounds in this call, "
                "the limit (max_tool_rounds_per_call)"
            )
            stop: EndCall | Literal["turn over"] = EndCall(reason=reason)
        elif self._turn_rounds >= cfg.max_tool_rounds_per_turn:
            reason = (
                f"prompt agent: {cfg.max_tool_rounds_per_turn} tool rounds since the caller "
                "last spoke, the limit (max_tool_rounds_per_turn); the turn ends"
            )
            stop = "turn over"
        else:
            self._turn_rounds += 1
            self._call_rounds += 1
            return None
        log.warning("%s", reason)
        # Every call of the assistant message gets its answer, so the history stays valid.
        for call_id in ids:
            self._tool_message(call_id, {"error": f"not run: {reason}"})
        return stop

    def _record_event(self, event: Event) -> bool:
        """Append the event to the history; True when the model should answer now."""
        if isinstance(event, ToolResult | ToolError):
            content: dict[str, Any] = (
                {"result": event.result}
                if isinstance(event, ToolResult)
                else {"error": event.error.value, "message": event.message}
            )
            if event.call_id in self._pending:
                self._pending.remove(event.call_id)
                self._tool_message(event.call_id, content)
                # With parallel calls the model answers once all of them are back.
                return not self._pending
            self._note(f"[late answer of tool call {event.call_id}: {json.dumps(content)}]")
            return True
        text = _event_text(event)
        if text is None:
            return False
        self._turn_rounds = 0  # a new turn: the caller (or a timer) spoke
        self._note(text)
        return True

    def _note(self, text: str) -> None:
        # Chat APIs reject a user message between tool calls and their answers, so calls
        # still out get a placeholder; their real answer arrives later as a note.
        for call_id in self._pending:
            self._tool_message(call_id, {"status": "pending: the answer will follow"})
        self._pending.clear()
        self._messages.append({"role": "user", "content": text})

    def _tool_message(self, call_id: str, content: object) -> None:
        self._messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(content, default=str)}
        )


def sends_tool_choice(role: RoleConfig, found: Capabilities | None) -> bool:
    """Whether `tool_choice` goes with the tools: as configured, else unless the endpoint
    was found to take tools only without it (docs/llm.md, "What an endpoint supports")."""
    if role.tool_choice != "auto":
        return role.tool_choice == "send"
    return found is None or found.tools != "without_tool_choice"


def seed_range(role: RoleConfig, found: Capabilities | None) -> int | None:
    """How many seeds to draw from (the seed is the call's seed modulo this), or None to
    send no seed: the endpoint refused every one tried. Never above SEED_RANGE, so a run
    sends the same seeds to every server that takes them."""
    if role.seed_max is not None:
        return min(SEED_RANGE, role.seed_max + 1)
    if found is not None and found.seeds == "refused":
        return None
    largest = found.seed_max if found is not None else None
    return min(SEED_RANGE, largest + 1) if largest is not None else SEED_RANGE


def _assistant_message(reply: ChatReply, ids: list[str]) -> dict[str, Any]:
    """The reply as the history keeps it. Content is a string even beside tool calls:
    llama.cpp's server answers HTTP 500 to `content: null`."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json},
            }
            for call_id, call in zip(ids, reply.tool_calls, strict=True)
        ]
    return message


def _event_text(event: Event) -> str | None:
    if isinstance(event, CallStarted):
        return "[the call has connected]"
    if isinstance(event, CallerSaid):
        return event.text
    if isinstance(event, BargeIn):
        # Background noise is not something the model should answer.
        return f"[the caller interrupts] {event.text}" if event.text else None
    if isinstance(event, Silence):
        return f"[the caller has been silent for {event.seconds:g} seconds]"
    if isinstance(event, TimerFired):
        return f"[timer {event.name} fired]"
    return None


def load_prompt_agent(
    path: str | Path, base_dir: Path | None = None, *, run_llm_config: Path | None = None
) -> PromptAgentFactory:
    """The factory for `prompt:path/to/agent.yaml` (relative to `base_dir` when given);
    `run_llm_config`, the run's LLM config file, gives the model when the file names none."""
    file = Path(path)
    if not file.is_absolute() and base_dir is not None and not file.exists():
        file = base_dir / file
    return PromptAgentFactory(file, run_llm_config=run_llm_config)
