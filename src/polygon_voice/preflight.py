"""Before a run: can every model role it needs work? Checked cheapest first, all at once.

For each role a run (or a command) needs — the judge of `--judge llm`, the caller of a
`caller: llm` scenario, a prompt agent's model, model-answered probes, the persona generator,
the lint's model tier — four things, in this order:

1. the `llm` extra is installed (the `aiohttp` package is found; it is not imported);
2. a model is named for the role;
3. the API key is there when the endpoint needs one (the variable the settings name is set;
   a well-known hosted API is not left without a key);
4. the endpoint answers a cheap request within a few seconds: `GET {base_url}/models`, or a
   one-token chat completion when the server has no such route.

Every problem is collected, not only the first: `check_roles` returns them as
`SetupProblem`s (who needs the model, what is wrong, what to do) and `require_ready` raises
one `SetupError` that lists them all. Roles that share an endpoint, model and key are asked
once, concurrently, within `CHECK_SECONDS` in all. No message ever holds a key: keys and URL
credentials are masked (masking.py). `POLYGON_PREFLIGHT=0` skips step 4 (the only one that
touches the network) and step 5.

5. what the run must know about an endpoint that answered and the settings do not fix (the
   structured-output form of the caller and judge, the prompt agent's tool_choice and seed
   range) is taken from the capability cache, or found by a cheap probe and cached
   (llm/capabilities.py); the structured form is then settled for the run, so no request is
   refused mid-run to find it out. An endpoint that refuses tools is a problem of the agent.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import importlib.util
import ipaddress
import json
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from polygon_voice.llm.config import DEFAULT_BASE_URL, LLMSettings, Role, RoleConfig
from polygon_voice.llm.errors import LLMConfigError, on_one_line, redact
from polygon_voice.masking import (
    authorization,
    mask_secrets,
    mask_url,
    url_secrets,
    without_userinfo,
)

__all__ = [
    "CHECK_SECONDS",
    "PREFLIGHT_ENV",
    "RoleNeed",
    "SetupError",
    "SetupProblem",
    "check_roles",
    "check_roles_async",
    "check_run_roles",
    "endpoint_checks_enabled",
    "require_ready",
    "run_needs",
]

PREFLIGHT_ENV = "POLYGON_PREFLIGHT"
"""Set to 0 (or false, no, off) to skip the endpoint check; the other checks always run."""
CHECK_SECONDS = 5.0
"""The bound on all endpoint checks together (they run concurrently)."""
LLM_EXTRA = "pip install 'polygon-voice[llm]'"

# Hosted APIs that refuse every request without a key: a role pointed at one with no key
# configured cannot work. Other endpoints (local servers, proxies) may need none.
_HOSTED_NEEDING_KEYS = frozenset(
    {
        urlsplit(DEFAULT_BASE_URL).hostname or "api.openai.com",
        "api.anthropic.com",
        "api.deepseek.com",
        "api.fireworks.ai",
        "api.groq.com",
        "api.mistral.ai",
        "api.together.xyz",
        "generativelanguage.googleapis.com",
        "openrouter.ai",
    }
)
_HOSTED_SUFFIXES = (".openai.azure.com",)
_OFF = frozenset({"0", "false", "no", "off"})
_NO_KEY = "no-key"  # what the client sends without a key (transport.NO_KEY)
_MAX_LIST_BYTES = 4 * 1024 * 1024
_DETAIL_LIMIT = 200
_T = TypeVar("_T")


@dataclass(frozen=True)
class RoleNeed:
    """One thing that needs a model role, in the words a user knows it by.

    `why` says what needs it ("--judge llm", "scenario 'refund' has caller: llm", "the prompt
    agent agent.yaml"). `config` is the role's own settings when they are not the run's
    `settings.role(role)` (a prompt agent's file sets its own model and endpoint); `model_hint`
    replaces the standard "set POLYGON_<ROLE>_MODEL ..." advice when no model is named, and
    `key_hint` the advice when its key variable is missing.
    """

    role: Role
    why: str
    config: RoleConfig | None = None
    model_hint: str | None = None
    key_hint: str | None = None

    @property
    def label(self) -> str:
        """`judge (--judge llm)`: the role and what needs it."""
        return f"{self.role} ({self.why})"


@dataclass(frozen=True)
class SetupProblem:
    """Why one role (or several sharing an endpoint) cannot work, and what to do about it."""

    role: str
    what: str
    hint: str

    def __str__(self) -> str:
        return f"{self.role}: {self.what}. {self.hint}"


class SetupError(LLMConfigError):
    """The run cannot start: every problem found before it, in one message (exit code 2)."""

    def __init__(self, problems: Sequence[SetupProblem], what: str = "the run") -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"{what} cannot start; nothing was sent or run:\n{lines}")


def endpoint_checks_enabled(env: Mapping[str, str] | None = None) -> bool:
    """False when POLYGON_PREFLIGHT is 0/false/no/off: the endpoint is then not asked."""
    value = (os.environ if env is None else env).get(PREFLIGHT_ENV, "")
    return value.strip().lower() not in _OFF


def run_needs(
    *,
    judge_llm: bool = False,
    llm_caller_scenarios: Sequence[str] = (),
    prompt_agent: RoleConfig | None = None,
    prompt_agent_file: str | None = None,
    model_probes: Sequence[str] = (),
) -> list[RoleNeed]:
    """The roles a run needs, from plain facts about it.

    `judge_llm`: the run judges with `--judge llm`; `llm_caller_scenarios`: ids of the
    scenarios with `caller: llm`; `prompt_agent`: the settings of a `prompt:FILE` agent
    (`PromptAgentFactory.role_config`), named by `prompt_agent_file`; `model_probes`: ids of
    the probes a model answers (they use the judge role).
    """
    needs: list[RoleNeed] = []
    if judge_llm:
        needs.append(RoleNeed("judge", "--judge llm"))
    if llm_caller_scenarios:
        needs.append(RoleNeed("caller", _scenarios_phrase(llm_caller_scenarios)))
    if prompt_agent is not None:
        needs.append(prompt_agent_need(prompt_agent, prompt_agent_file))
    if model_probes:
        needs.append(RoleNeed("judge", f"probes {_listed(model_probes)}"))
    return needs


def prompt_agent_need(config: RoleConfig, file: str | None = None) -> RoleNeed:
    """The need of a `prompt:FILE` agent, with advice that points at its file."""
    where = f"the prompt agent {file}" if file else "the prompt agent"
    return RoleNeed(
        "agent",
        where,
        config=config,
        model_hint=(
            f"Give `model:` in {file or 'the agent file'}, an `llm_config:` with "
            "llm.agent.model, or POLYGON_AGENT_MODEL"
        ),
        key_hint=f"or change `api_key_env:` in {file or 'the agent file'}",
    )


def check_run_roles(
    settings: LLMSettings,
    *,
    judge_llm: bool = False,
    llm_caller_scenarios: Sequence[str] = (),
    prompt_agent: RoleConfig | None = None,
    prompt_agent_file: str | None = None,
    model_probes: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    endpoints: bool | None = None,
) -> list[SetupProblem]:
    """`check_roles(run_needs(...), settings)`: the problems of a run's model roles."""
    needs = run_needs(
        judge_llm=judge_llm,
        llm_caller_scenarios=llm_caller_scenarios,
        prompt_agent=prompt_agent,
        prompt_agent_file=prompt_agent_file,
        model_probes=model_probes,
    )
    return check_roles(needs, settings, env=env, endpoints=endpoints)


def check_roles(
    needs: Sequence[RoleNeed],
    settings: LLMSettings,
    *,
    env: Mapping[str, str] | None = None,
    endpoints: bool | None = None,
    timeout: float = CHECK_SECONDS,
) -> list[SetupProblem]:
    """Every problem that would stop one of `needs` from working; [] when all can work.

    `endpoints` (default: unless POLYGON_PREFLIGHT=0) asks each distinct endpoint a cheap
    request, all concurrently, within `timeout` seconds in all. Blocks for that long at most;
    from async code use `check_roles_async`.
    """
    problems, probes = _checks_to_make(needs, settings, env, endpoints)
    if probes:
        problems += _run_probes(probes, timeout)
        problems += _settle_capabilities(probes, settings.cache_dir, env)
    return problems


async def check_roles_async(
    needs: Sequence[RoleNeed],
    settings: LLMSettings,
    *,
    env: Mapping[str, str] | None = None,
    endpoints: bool | None = None,
    timeout: float = CHECK_SECONDS,
) -> list[SetupProblem]:
    """`check_roles` without blocking the event loop (the requests run in daemon threads)."""
    problems, probes = _checks_to_make(needs, settings, env, endpoints)
    if probes:
        futures = [_in_daemon_thread(probe.run, timeout) for probe in probes]
        waited = [asyncio.wrap_future(future) for future in futures]
        await asyncio.wait(waited, timeout=timeout + 0.5)
        problems += _collect(probes, futures, timeout)
        settling = _in_daemon_thread(
            lambda _: _settle_capabilities(probes, settings.cache_dir, env), timeout
        )
        settled: list[SetupProblem] = await asyncio.wrap_future(settling)
        problems += settled
    return problems


def _checks_to_make(
    needs: Sequence[RoleNeed],
    settings: LLMSettings,
    env: Mapping[str, str] | None,
    endpoints: bool | None,
) -> tuple[list[SetupProblem], list[_Probe]]:
    """The problems found without a request, and the endpoint checks still to make (none
    when they are switched off)."""
    env = os.environ if env is None else env
    problems, probes = _offline_checks(needs, settings, env)
    asked = endpoint_checks_enabled(env) if endpoints is None else endpoints
    return problems, probes if asked else []


def require_ready(
    needs: Sequence[RoleNeed],
    settings: LLMSettings,
    *,
    env: Mapping[str, str] | None = None,
    endpoints: bool | None = None,
    timeout: float = CHECK_SECONDS,
    what: str = "the run",
) -> None:
    """Raise one SetupError naming every problem of `needs`; return when all can work.

    `what` names what cannot start in the message ("the run", "persona generation").
    """
    problems = check_roles(needs, settings, env=env, endpoints=endpoints, timeout=timeout)
    if problems:
        raise SetupError(problems, what)


@dataclass(frozen=True)
class Reached:
    """Steps 1-4 without step 5, for `polygon llm check`: what stops a role before any
    request (`setup`), which endpoints did not answer (`unreachable`), and the Server header
    of each endpoint + model that did."""

    setup: list[SetupProblem]
    unreachable: list[SetupProblem]
    servers: dict[tuple[str, str], str | None]


def reach(
    needs: Sequence[RoleNeed],
    settings: LLMSettings,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = CHECK_SECONDS,
) -> Reached:
    """The offline checks and the endpoint check of `needs`, told apart."""
    setup, probes = _offline_checks(needs, settings, os.environ if env is None else env)
    unreachable = _run_probes(probes, timeout) if probes else []
    servers = {(p.config.base_url, p.model): p.server for p in probes if p.works}
    return Reached(setup, unreachable, servers)


# -- the offline checks: extra, model, key ------------------------------------------------


def _offline_checks(
    needs: Sequence[RoleNeed], settings: LLMSettings, env: Mapping[str, str]
) -> tuple[list[SetupProblem], list[_Probe]]:
    """The problems found without the network, and the endpoint probes still to make."""
    needs = _distinct(needs)
    problems: list[SetupProblem] = []
    if needs and not _client_installed():
        problems.append(
            SetupProblem(
                _joined(need.label for need in needs),
                "the `llm` extra is not installed (the aiohttp package is missing)",
                f"Install it: {LLM_EXTRA}",
            )
        )
    probes: dict[tuple[str, str, str | None], _Probe] = {}
    for need in needs:
        config = need.config or settings.role(need.role)
        found = _model_problem(need, config) or _key_problem(need, config, env)
        if found is not None:
            problems.append(found)
            continue
        assert config.model is not None  # _model_problem saw to it
        key = env.get(config.api_key_env) if config.api_key_env else None
        group = (config.base_url, config.model, key)
        if group in probes:
            probes[group].labels.append(need.label)
        else:
            probes[group] = _Probe(need, config, config.model, key, [need.label])
        probes[group].needs.append((need, config))
    return problems, list(probes.values())


def _distinct(needs: Sequence[RoleNeed]) -> list[RoleNeed]:
    """One need per role and settings: probes and the judge share the judge role's model."""
    seen: dict[tuple[Role, RoleConfig | None], RoleNeed] = {}
    for need in needs:
        key = (need.role, need.config)
        if key in seen:
            first = seen[key]
            seen[key] = RoleNeed(
                first.role,
                f"{first.why}; {need.why}",
                first.config,
                first.model_hint,
                first.key_hint,
            )
        else:
            seen[key] = need
    return list(seen.values())


def _client_installed() -> bool:
    try:
        return importlib.util.find_spec("aiohttp") is not None
    except (ImportError, ValueError):  # a finder that refuses it, a half-removed package
        return False


def _model_problem(need: RoleNeed, config: RoleConfig) -> SetupProblem | None:
    if config.configured:
        return None
    role = need.role
    hint = need.model_hint or (
        f"Set POLYGON_{role.upper()}_MODEL, or llm.{role}.model in the file given with "
        "--llm-config (docs/llm.md)"
    )
    return SetupProblem(need.label, "no model is named", hint)


def _key_problem(need: RoleNeed, config: RoleConfig, env: Mapping[str, str]) -> SetupProblem | None:
    name = config.api_key_env
    endpoint = _shown(config.base_url)
    if name is not None:
        if env.get(name):
            return None
        state = "is empty" if name in env else "is not set"
        hint = f"Set it to your key (export {name}=...)"
        if need.key_hint:
            hint += f", {need.key_hint}"
        return SetupProblem(need.label, f"the API key variable {name} {state}", hint)
    if not _needs_a_key(config.base_url):
        return None
    role = need.role.upper()
    hint = (
        f"Set POLYGON_{role}_API_KEY to your key (or POLYGON_API_KEY for every role), or "
        f"point the role at another endpoint with POLYGON_{role}_BASE_URL"
    )
    if env.get("OPENAI_API_KEY"):
        # The SDK's own variable is never read behind the user's back: say how to use it.
        hint += (
            "; OPENAI_API_KEY is set, but only the variable the settings name is read "
            f"(llm.{need.role}.api_key_env: OPENAI_API_KEY names it)"
        )
    return SetupProblem(need.label, f"no API key for {endpoint}", hint)


def _needs_a_key(base_url: str) -> bool:
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    hosted = host in _HOSTED_NEEDING_KEYS or host.endswith(_HOSTED_SUFFIXES)
    # A key carried in the URL itself (user:password@, ?key=...) counts as one.
    return hosted and parts.password is None and not url_secrets(base_url)


# -- the endpoint check --------------------------------------------------------------------


class _Answer(Exception):
    """An attempt's outcome that is a problem: what happened, what to do."""

    def __init__(self, what: str, hint: str) -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint


@dataclass
class _Probe:
    """One endpoint + model + key, asked once for every role that shares it."""

    need: RoleNeed
    config: RoleConfig
    model: str
    key: str | None
    labels: list[str]
    timeout: float = CHECK_SECONDS
    # Every need sharing this endpoint (each with its role's settings), and what the check
    # learnt: whether the endpoint works, and the Server header its answer carried.
    needs: list[tuple[RoleNeed, RoleConfig]] = field(default_factory=list)
    works: bool = False
    server: str | None = None

    def run(self, timeout: float) -> SetupProblem | None:
        """None when the endpoint answered as a working one would, else the problem."""
        self.timeout = timeout
        deadline = time.monotonic() + timeout
        try:
            self._ask(deadline)
        except _Answer as answer:
            return SetupProblem(_joined(self.labels), self._clean(answer.what), answer.hint)
        self.works = True
        return None

    def _ask(self, deadline: float) -> None:
        try:
            body = self._request(self._url("/models"), None, deadline)
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise self._refused_key(exc) from None
            # No /models route (some proxies), or a server that only serves completions.
            self._ask_completion(deadline)
            return
        # A list longer than what is read is a list all the same (hosted APIs list hundreds).
        if len(body) < _MAX_LIST_BYTES and not _is_json(body):
            raise _Answer(
                f"{self._endpoint} answered GET /models with something that is not JSON",
                f"Check the base URL ({self._where_url}): it is the OpenAI-compatible API, "
                "up to and including /v1",
            )

    def _ask_completion(self, deadline: float) -> None:
        payload = {
            "model": self.model,
            "messages": [{"role": "user", "content": "Say OK."}],
            "max_tokens": 1,
        }
        try:
            self._request(self._url("/chat/completions"), payload, deadline)
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise self._refused_key(exc) from None
            if exc.code == 429:
                return  # reachable and the key accepted: the run's retries wait for it
            if exc.code == 404:
                raise _Answer(
                    f"{self._endpoint} answered HTTP 404 for model {self.model!r}: {_detail(exc)}",
                    f"Check the model name ({self._where_model}) and the base URL "
                    f"({self._where_url}; most servers want it to end with /v1)",
                ) from None
            raise _Answer(
                f"{self._endpoint} refused a one-token request: HTTP {exc.code}: {_detail(exc)}",
                f"Check the server's log, the model name ({self._where_model}) and the "
                f"base URL ({self._where_url})",
            ) from None

    def _request(self, url: str, payload: dict[str, object] | None, deadline: float) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._no_answer()
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(url, data=data, headers=self._headers(payload))
        try:
            with _opener(url).open(request, timeout=remaining) as response:
                raw: bytes = response.read(_MAX_LIST_BYTES)
                self.server = response.headers.get("Server")
                return raw
        except urllib.error.HTTPError:
            raise
        except urllib.error.URLError as exc:
            raise self._unreachable(exc.reason) from None
        except TimeoutError:
            raise self._no_answer() from None
        except http.client.HTTPException as exc:  # not HTTP at all: another service's port
            raise _Answer(
                f"{self._endpoint} does not answer as an HTTP server ({type(exc).__name__})",
                f"Check the base URL's host and port ({self._where_url})",
            ) from None
        except (OSError, ValueError) as exc:
            raise self._unreachable(exc) from None

    def _headers(self, payload: dict[str, object] | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "X-Polygon-Role": self.need.role}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        headers["Authorization"] = authorization(self.config.base_url, self.key, _NO_KEY)
        return headers

    def _url(self, route: str) -> str:
        plain, _ = without_userinfo(self.config.base_url)
        parts = urlsplit(plain)
        # The query (?api-version=, ?key=) stays after the path, as the client sends it.
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + route))

    def _unreachable(self, reason: object) -> _Answer:
        host = urlsplit(self.config.base_url).hostname or "?"
        if isinstance(reason, TimeoutError):
            return self._no_answer()
        if isinstance(reason, ConnectionRefusedError):
            what = f"cannot connect to {self._endpoint}: connection refused"
            hint = f"Is the server running? Check the base URL ({self._where_url})"
        elif isinstance(reason, socket.gaierror):
            what = f"cannot connect to {self._endpoint}: the host name {host!r} is not known"
            hint = f"Check the base URL ({self._where_url})"
        elif isinstance(reason, ssl.SSLError | ssl.CertificateError):
            what = f"cannot connect to {self._endpoint}: TLS failed ({reason})"
            hint = f"Check the base URL's scheme and host ({self._where_url})"
        else:
            what = f"cannot connect to {self._endpoint}: {reason}"
            hint = f"Is the server running? Check the base URL ({self._where_url})"
        return _Answer(what, hint)

    def _no_answer(self) -> _Answer:
        return _Answer(
            f"{self._endpoint} did not answer within {self.timeout:g} s",
            f"Is the server up and not overloaded? Check the base URL ({self._where_url}); "
            f"{PREFLIGHT_ENV}=0 skips this check",
        )

    def _refused_key(self, exc: urllib.error.HTTPError) -> _Answer:
        name = self.config.api_key_env
        given = f"the key in {name}" if name else "no key"
        hint = (
            f"Check the key in {name}"
            if name
            else f"Set POLYGON_{self.need.role.upper()}_API_KEY to your key"
        )
        return _Answer(f"{self._endpoint} refused {given}: HTTP {exc.code}: {_detail(exc)}", hint)

    @property
    def _endpoint(self) -> str:
        return _shown(self.config.base_url)

    @property
    def _where_url(self) -> str:
        return _where(self.need, "base_url")

    @property
    def _where_model(self) -> str:
        return _where(self.need, "model")

    def _clean(self, text: str) -> str:
        # What a server says is untrusted, and may repeat the key or the URL's credentials.
        text = redact(text, self.key)
        return mask_secrets(text, url_secrets(self.config.base_url))


# -- step 5: what the endpoint supports --------------------------------------------------


def _settle_capabilities(
    probes: Sequence[_Probe], cache_dir: Path, env: Mapping[str, str] | None
) -> list[SetupProblem]:
    """Fill what the run must know of each working endpoint from the cache or a probe,
    and use it for the run; the problems are what cannot work (tools refused)."""
    from polygon_voice.llm import capability_probe

    working = [probe for probe in probes if probe.works]
    if not working:
        return []
    try:
        timeout = capability_probe.probe_timeout(os.environ if env is None else env)
    except capability_probe.ProbeTimeoutError as error:
        labels = _joined(label for probe in working for label in probe.labels)
        hint = "Unset it, or set it to the seconds one probe request may take"
        return [SetupProblem(labels, str(error), hint)]

    def settle(probe: _Probe) -> Callable[[float], list[SetupProblem]]:
        return lambda seconds: _capabilities_of(probe, cache_dir, seconds)

    futures = [_in_daemon_thread(settle(probe), timeout) for probe in working]
    # Each probe stops at its own budget; this wait is only the backstop for a stuck thread.
    concurrent.futures.wait(futures, timeout=capability_probe.BUDGET_FACTOR * timeout + 1)
    problems: list[SetupProblem] = []
    for future in futures:
        if future.done() and future.exception() is None:
            problems += future.result()
    return problems


def _capabilities_of(probe: _Probe, cache_dir: Path, timeout: float) -> list[SetupProblem]:
    from polygon_voice.llm import capabilities, capability_probe

    wanted = frozenset().union(*(capabilities.needed(config) for _, config in probe.needs))
    if not wanted:
        return []  # the settings fix everything the run needs: nothing to ask
    found, _ = capability_probe.find(
        probe.config, cache_dir, wanted, key=probe.key, timeout=timeout, server=probe.server
    )
    problems = []
    for need, config in probe.needs:
        capabilities.adopt(config, found)
        if config.role == "agent" and config.tool_choice == "auto" and found.tools == "refused":
            problems.append(_tools_refused(need, probe, found.notes.get("tools", "")))
    return problems


def _tools_refused(need: RoleNeed, probe: _Probe, why: str) -> SetupProblem:
    return SetupProblem(
        need.label,
        probe._clean(f"{probe._endpoint} (model {probe.model}) refuses tool calls ({why})"),
        "The prompt agent offers tools on every turn. Start the server with tool calling on "
        "(vLLM: --enable-auto-tool-choice --tool-call-parser NAME) or point the agent at a "
        "model that takes tools; `polygon llm check --role agent` shows what the endpoint "
        "supports",
    )


def _where(need: RoleNeed, field: str) -> str:
    if need.config is not None and need.role == "agent":
        return f"`{field}:` in the agent file"
    role = need.role
    if field == "base_url":
        return f"POLYGON_{role.upper()}_BASE_URL, POLYGON_BASE_URL or llm.{role}.base_url"
    return f"POLYGON_{role.upper()}_{field.upper()} or llm.{role}.{field}"


def _run_probes(probes: Sequence[_Probe], timeout: float) -> list[SetupProblem]:
    futures = [_in_daemon_thread(probe.run, timeout) for probe in probes]
    concurrent.futures.wait(futures, timeout=timeout + 0.5)
    return _collect(probes, futures, timeout)


def _collect(
    probes: Sequence[_Probe],
    futures: Sequence[concurrent.futures.Future[SetupProblem | None]],
    timeout: float,
) -> list[SetupProblem]:
    problems: list[SetupProblem] = []
    for probe, future in zip(probes, futures, strict=True):
        if not future.done():
            # A name lookup that hangs is not bounded by the socket timeout: the thread is
            # left behind (a daemon) and the role counts as not answering.
            probe.timeout = timeout
            answer = probe._no_answer()
            problems.append(SetupProblem(_joined(probe.labels), answer.what, answer.hint))
            continue
        error = future.exception()
        if error is not None:
            # A check that broke is reported, never a traceback: the run can skip it.
            problems.append(
                SetupProblem(
                    _joined(probe.labels),
                    probe._clean(f"the endpoint check failed: {type(error).__name__}: {error}"),
                    f"{PREFLIGHT_ENV}=0 skips this check",
                )
            )
            continue
        problem = future.result()
        if problem is not None:
            problems.append(problem)
    return problems


def _in_daemon_thread(work: Callable[[float], _T], timeout: float) -> concurrent.futures.Future[_T]:
    """`work(timeout)` in a daemon thread: one stuck in DNS never holds the process open."""
    future: concurrent.futures.Future[_T] = concurrent.futures.Future()

    def target() -> None:
        try:
            future.set_result(work(timeout))
        except BaseException as exc:  # handed to the waiter, which reports it
            future.set_exception(exc)

    threading.Thread(target=target, name="polygon-preflight", daemon=True).start()
    return future


def _opener(url: str) -> urllib.request.OpenerDirector:
    # A proxy from the environment is used for remote hosts only: a loopback server (a local
    # model, the fake server) is reached directly, as the client's own transport does.
    host = urlsplit(url).hostname or ""
    if _is_loopback(host):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _detail(exc: urllib.error.HTTPError) -> str:
    """The server's error message (OpenAI's `error.message`), cut short and printable."""
    try:
        raw = exc.read(64 * 1024)
    except OSError:
        raw = b""
    text = raw.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        message = error.get("message") if isinstance(error, dict) else error
        text = str(message) if message else ""
    said = on_one_line(text, _DETAIL_LIMIT) or on_one_line(str(exc.reason or ""), _DETAIL_LIMIT)
    return said or "no message"


def _shown(url: str) -> str:
    """The endpoint as every message shows it: without user:password@, keys masked."""
    plain, _ = without_userinfo(url)
    return mask_url(plain)


def _joined(labels: Iterable[str]) -> str:
    return "; ".join(dict.fromkeys(labels))


def _listed(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return f"{shown} and {more} more" if more > 0 else shown


def _scenarios_phrase(ids: Sequence[str]) -> str:
    quoted = [repr(i) for i in ids]
    noun = "scenario" if len(ids) == 1 else "scenarios"
    verb = "has" if len(ids) == 1 else "have"
    return f"{noun} {_listed(quoted)} {verb} caller: llm"
