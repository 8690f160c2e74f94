"""The cheap probe that finds an endpoint's capabilities (capabilities.py holds the record).

Every request is small (`max_tokens: 1`; 16 for the tool probe, so a tool call can come
back), waits at most the probe timeout (`POLYGON_PROBE_TIMEOUT`, default 10 s) and is never
retried. Once one request goes unanswered no more are sent: a server that did not answer
one will not answer the next, and a single-slot server is still busy with the first. What
was not found is None in the record, with the reason in `notes`.

Probe requests carry `X-Polygon-Probe: capabilities` beside the role header; real servers
ignore it, the fake server answers them from its dialect alone (testing/dialects.py).
Plain urllib, like the preflight check: no need for the `llm` extra.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from polygon_voice.envsettings import seconds_from_env
from polygon_voice.llm.capabilities import (
    CAPABILITIES,
    SEED_TRIES,
    Capabilities,
    Capability,
    LogprobSupport,
    SeedRange,
    ToolSupport,
    cached,
    endpoint_label,
    missing,
    remember,
)
from polygon_voice.llm.config import RoleConfig
from polygon_voice.llm.dialects import is_shape_refusal
from polygon_voice.llm.errors import on_one_line, redact
from polygon_voice.llm.structured import StructuredForm, response_format
from polygon_voice.masking import authorization, mask_secrets, url_secrets, without_userinfo

log = logging.getLogger("polygon_voice.llm.capabilities")
PROBE_ENV = "POLYGON_PROBE_TIMEOUT"
PROBE_SECONDS = 10.0
PROBE_HEADER = "X-Polygon-Probe"
# One endpoint's whole probe stops after this many probe timeouts, answered or not.
BUDGET_FACTOR = 3
_MAX_BODY = 1024 * 1024
_DETAIL = 300
# Statuses that say nothing about the request's shape: the key, the model, the rate.
_NOT_ABOUT_SHAPE = frozenset({401, 403, 404, 408, 409, 429})
_TOOL_WORDS = re.compile(r"tool|function", re.I)
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time.",
        "parameters": {"type": "object", "properties": {}},
    },
}
_HELLO = [{"role": "user", "content": "Say OK."}]


class ProbeTimeoutError(ValueError):
    """POLYGON_PROBE_TIMEOUT is not a positive number of seconds."""


def probe_timeout(env: Mapping[str, str] | None = None) -> float:
    """POLYGON_PROBE_TIMEOUT in seconds, PROBE_SECONDS when unset."""
    try:
        return seconds_from_env(os.environ if env is None else env, PROBE_ENV, PROBE_SECONDS)
    except ValueError as error:
        raise ProbeTimeoutError(str(error)) from None


@dataclass(frozen=True)
class _Reply:
    """One probe answer: status None when none came (the reason is in `detail`)."""

    status: int | None
    data: Any = None
    detail: str = ""
    server: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


@dataclass
class _Prober:
    """Sends the probe requests of one endpoint + model, each bounded, none retried."""

    config: RoleConfig
    key: str | None
    timeout: float
    stopped: str | None = None
    sent: int = 0
    notes: dict[str, str] = field(default_factory=dict)
    deadline: float = 0.0

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + BUDGET_FACTOR * self.timeout

    @property
    def model(self) -> str:
        return self.config.model or ""

    def chat(self, **fields: Any) -> _Reply:
        body = {"model": self.model, "messages": _HELLO, "max_tokens": 1, "temperature": 0}
        return self.send("/chat/completions", {**body, **fields})

    def send(self, route: str, body: dict[str, Any] | None, *, root: bool = False) -> _Reply:
        """POST `body` (GET when None) to `route` under the base URL (or its root)."""
        if self.stopped is not None:
            return _Reply(None, detail=self.stopped)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            budget = BUDGET_FACTOR * self.timeout
            self.stopped = f"not asked: the probe's budget of {budget:g} s was spent"
            return _Reply(None, detail=self.stopped)
        self.sent += 1
        request = urllib.request.Request(
            self._url(route, root),
            data=json.dumps(body).encode() if body is not None else None,
            headers=self._headers(body is not None),
        )
        reply = self._open(request, min(self.timeout, remaining))
        if reply.status is None:
            self.stopped = reply.detail  # nothing more is sent to a server that is silent
        return reply

    def _open(self, request: urllib.request.Request, timeout: float) -> _Reply:
        from polygon_voice.preflight import _opener  # loopback skips proxies, as there

        try:
            with _opener(request.full_url).open(request, timeout=timeout) as response:
                raw = response.read(_MAX_BODY)
                return _Reply(response.status, _json(raw), "", response.headers.get("Server"))
        except urllib.error.HTTPError as error:
            try:
                raw = error.read(_MAX_BODY)
            except OSError:
                raw = b""
            return _Reply(error.code, None, self.clean(_message(raw) or str(error.reason)))
        except TimeoutError:
            return _Reply(None, detail=f"not answered within {self.timeout:g} s")
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                return _Reply(None, detail=f"not answered within {self.timeout:g} s")
            return _Reply(None, detail=self.clean(f"cannot connect: {error.reason}"))
        except (OSError, ValueError, http.client.HTTPException) as error:
            return _Reply(None, detail=self.clean(f"no answer: {type(error).__name__}: {error}"))

    def _url(self, route: str, root: bool) -> str:
        plain, _ = without_userinfo(self.config.base_url)
        parts = urlsplit(plain)
        path = parts.path.rstrip("/")
        if root:
            # llama.cpp's /props and Ollama's /api/show live beside /v1, not under it.
            path = path.removesuffix("/v1")
        return urlunsplit(parts._replace(path=path + route))

    def _headers(self, with_body: bool) -> dict[str, str]:
        headers = {
            "Accept": "application/json",
            "X-Polygon-Role": self.config.role,
            PROBE_HEADER: "capabilities",
        }
        if with_body:
            headers["Content-Type"] = "application/json"
        headers["Authorization"] = authorization(self.config.base_url, self.key, "no-key")
        return headers

    def clean(self, text: str) -> str:
        """What a server says, without the key or the URL's credentials, on one short line."""
        text = mask_secrets(redact(text, self.key), url_secrets(self.config.base_url))
        return on_one_line(text, _DETAIL)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _message(raw: bytes) -> str:
    """The server's error message: OpenAI's `error.message`, vLLM's `message`, or the text."""
    data = _json(raw)
    if isinstance(data, dict):
        error = data.get("error", data)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)
        if "detail" in data:  # FastAPI's validation errors (llama-cpp-python)
            return json.dumps(data["detail"])[: _DETAIL * 2]
    return raw.decode("utf-8", "replace")


def _refused(reply: _Reply, words: re.Pattern[str] | None = None) -> bool:
    """An error answer that refuses what was asked (not the key, the model, the rate)."""
    if reply.status is None or reply.status < 400 or reply.status in _NOT_ABOUT_SHAPE:
        return False
    return words is None or words.search(reply.detail) is not None or reply.status in (400, 422)


def _why(reply: _Reply) -> str:
    return reply.detail if reply.status is None else f"HTTP {reply.status}: {reply.detail}"


# -- the probe -------------------------------------------------------------------------------


def probe(
    config: RoleConfig,
    wanted: Iterable[Capability] = CAPABILITIES,
    *,
    key: str | None = None,
    timeout: float = PROBE_SECONDS,
    server: str | None = None,
) -> Capabilities:
    """Ask the endpoint what it supports of `wanted`; never raises for what it answers."""
    return _probe(config, wanted, key=key, timeout=timeout, server=server)[0]


def _probe(
    config: RoleConfig,
    wanted: Iterable[Capability],
    *,
    key: str | None,
    timeout: float,
    server: str | None,
) -> tuple[Capabilities, bool]:
    """The record, and whether every request sent got an answer (else it is not cached)."""
    wanted = frozenset(wanted)
    prober = _Prober(config, key, timeout)
    record = Capabilities(endpoint_label(config.base_url), prober.model, server=server)
    record = _identify(prober, record, "context" in set(wanted))
    steps: dict[Capability, Callable[[_Prober, Capabilities], Capabilities]] = {
        "structured_output": _structured,
        "tools": _tools,
        "seed": _seeds,
        "logprobs": _logprobs,
    }
    asked = set(wanted)
    chat_asked = asked & {"structured_output", "tools", "seed"}
    if chat_asked:
        baseline = prober.chat()
        if not baseline.ok:
            # The plain request fails: nothing that follows would say anything about shapes.
            for name in chat_asked:
                prober.notes[name] = f"a plain one-token request failed: {_why(baseline)}"
            asked -= chat_asked
    for name, step in steps.items():
        if name in asked:
            record = step(prober, record)
    found = replace(record, probed=wanted, notes=dict(prober.notes), found_at=time.time())
    return found, prober.stopped is None


def _identify(prober: _Prober, record: Capabilities, context: bool) -> Capabilities:
    """Server kind, context length and slots from the routes each kind has."""
    models = prober.send("/models", None)
    server = models.server or record.server
    kind, length = _from_models(models.data, prober.model)
    slots = None
    if context or kind is None:
        props = prober.send("/props", None, root=True)
        if props.ok and isinstance(props.data, dict) and "total_slots" in props.data:
            kind = "llama.cpp"
            settings = props.data.get("default_generation_settings")
            if isinstance(settings, dict):
                length = _positive(settings.get("n_ctx")) or length
            slots = _positive(props.data.get("total_slots"))
    if kind in (None, "ollama") and (context or kind is None):
        shown = prober.send("/api/show", {"model": prober.model}, root=True)
        if shown.ok and isinstance(shown.data, dict) and "model_info" in shown.data:
            kind = "ollama"
            length = _ollama_context(shown.data) or length
    if context and length is None:
        prober.notes["context"] = "the server does not tell its context length"
    return replace(record, server=server, server_kind=kind, context_length=length, slots=slots)


def _from_models(data: Any, model: str) -> tuple[str | None, int | None]:
    """(kind, context length) from GET /models: vLLM gives max_model_len."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None, None
    mine = [e for e in entries if isinstance(e, dict) and e.get("id") == model]
    entry = (mine or [e for e in entries if isinstance(e, dict)] or [{}])[0]
    owner = entry.get("owned_by")
    length = _positive(entry.get("max_model_len"))
    if owner == "vllm" or length is not None:
        return "vllm", length
    if owner == "llamacpp":
        return "llama.cpp", None
    if owner == "me" and "permissions" in entry:
        return "llama-cpp-python", None  # its /v1/models, which tells no context length
    if owner == "library":
        return "ollama", None
    return None, None


def _ollama_context(data: dict[str, Any]) -> int | None:
    info = data.get("model_info")
    if not isinstance(info, dict):
        return None
    for name, value in info.items():
        if isinstance(name, str) and name.endswith(".context_length"):
            return _positive(value)
    return None


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _structured(prober: _Prober, record: Capabilities) -> Capabilities:
    forms: tuple[StructuredForm, ...] = ("json_schema", "json_object")
    for form in forms:
        reply = prober.chat(response_format=response_format(_PROBE_SCHEMA, "probe", form))
        if reply.ok:
            return replace(record, structured_output=form)
        if not (_refused(reply) and is_shape_refusal(reply.status, reply.detail)):
            prober.notes["structured_output"] = f"{form} not settled: {_why(reply)}"
            return record
    return replace(record, structured_output="prompt")


def _tools(prober: _Prober, record: Capabilities) -> Capabilities:
    found: ToolSupport = "refused"
    tries: tuple[tuple[ToolSupport, dict[str, str]], ...] = (
        ("with_tool_choice", {"tool_choice": "auto"}),
        ("without_tool_choice", {}),
    )
    for support, extra in tries:
        reply = prober.chat(
            messages=[{"role": "user", "content": "What time is it? Use the tool."}],
            tools=[_PROBE_TOOL],
            max_tokens=16,
            **extra,
        )
        if reply.ok:
            return replace(record, tools=support, tool_called=_called_a_tool(reply.data))
        if not _refused(reply, _TOOL_WORDS):
            prober.notes["tools"] = f"not settled: {_why(reply)}"
            return record
        prober.notes["tools"] = f"refused: {_why(reply)}"
    return replace(record, tools=found)


def _called_a_tool(data: Any) -> bool:
    try:
        calls = data["choices"][0]["message"].get("tool_calls")
    except (KeyError, IndexError, TypeError, AttributeError):
        return False
    return bool(calls)


def _seeds(prober: _Prober, record: Capabilities) -> Capabilities:
    last: _Reply | None = None
    for name, seed in SEED_TRIES:
        reply = prober.chat(seed=seed)
        if reply.ok:
            return replace(record, seeds=name)
        if not _refused(reply):
            prober.notes["seed"] = f"not settled: {_why(reply)}"
            return record
        last = reply
    refused: SeedRange = "refused"
    if last is not None:
        prober.notes["seed"] = f"even {SEED_TRIES[-1][1]} refused: {_why(last)}"
    return replace(record, seeds=refused)


def _logprobs(prober: _Prober, record: Capabilities) -> Capabilities:
    # The lint's own check sentence and alignment test: what it finds here, tier 2 finds.
    from polygon_voice.lint.logprobs import CHECK_SENTENCE, LogprobsError, shift_of

    reply = prober.send("/completions", _echo_body(prober.model, CHECK_SENTENCE, 1))
    refused: LogprobSupport = "refused"
    if not reply.ok:
        if _refused(reply) or reply.status == 404:
            prober.notes["logprobs"] = f"refused: {_why(reply)}"
            return replace(record, logprobs=refused)
        prober.notes["logprobs"] = f"not settled: {_why(reply)}"
        return record
    try:
        shift = shift_of(reply.data)
    except LogprobsError as error:  # the answer holds no prompt log-probabilities
        prober.notes["logprobs"] = prober.clean(str(error))
        return replace(record, logprobs=refused)
    if isinstance(shift, str):
        return _next_token_reading(prober, record, shift)
    return replace(record, logprobs="aligned" if shift == 0 else "shifted")


def _next_token_reading(prober: _Prober, record: Capabilities, why: str) -> Capabilities:
    """No shift lines the values up: lint's second reading, each token's value from the
    alternatives listed at the token before (llama-cpp-python scores every token by the
    distribution after it), decides between `next_token` and `unaligned`."""
    from polygon_voice.lint.logprobs import CHECK_SENTENCE, NEXT_TOKEN_TOP, next_token_check

    body = _echo_body(prober.model, CHECK_SENTENCE, NEXT_TOKEN_TOP)
    reply = prober.send("/completions", body)
    failed = next_token_check(reply.data) if reply.ok else f"not read: {_why(reply)}"
    if failed is None:
        return replace(record, logprobs="next_token")
    prober.notes["logprobs"] = prober.clean(f"{why}; read from the next token: {failed}")
    return replace(record, logprobs="unaligned")


def _echo_body(model: str, prompt: str, alternatives: int) -> dict[str, Any]:
    return {
        "model": model,
        "prompt": prompt,
        "echo": True,
        "logprobs": alternatives,
        "max_tokens": 1,
        "temperature": 0,
    }


def find(
    config: RoleConfig,
    cache_dir: Path,
    wanted: Iterable[Capability],
    *,
    key: str | None = None,
    timeout: float = PROBE_SECONDS,
    server: str | None = None,
    refresh: bool = False,
) -> tuple[Capabilities, bool]:
    """The record for `wanted`: from the cache when it has all of it (no request), else
    probed for what it lacks and cached. The flag says whether anything was sent."""
    assert config.model is not None
    wanted = frozenset(wanted)
    known = None if refresh else cached(cache_dir, config.base_url, config.model, server)
    lacking = missing(known, wanted)
    if known is not None and not lacking:
        return known, False
    log.info(
        "asking %s (model %s) what it supports: %s",
        endpoint_label(config.base_url),
        config.model,
        ", ".join(sorted(lacking)),
    )
    found, answered = _probe(config, lacking, key=key, timeout=timeout, server=server)
    if known is not None and found.server != known.server:
        known = None  # another server answers there now: the old record is not its
    record = known.merged(found) if known is not None else found
    if answered:
        # A probe a server left unanswered is no finding: the next run asks again.
        remember(cache_dir, config.base_url, record)
    return record, True
