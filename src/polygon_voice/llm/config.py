"""Per-role LLM settings: a config file, then the environment, then the defaults.

Precedence, lowest first: defaults < the file's shared `llm:` keys < the file's role section
< `POLYGON_BASE_URL` / `POLYGON_API_KEY` < `POLYGON_<ROLE>_BASE_URL` / `_API_KEY` / `_MODEL`
(and `_TIMEOUT`, `_TURN_TIMEOUT`, ... : `_ROLE_VARIABLES`).
An API key is never part of the settings: only the NAME of the variable that holds it is.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from collections.abc import Iterator, Mapping, Set
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from polygon_voice.llm.errors import LLMConfigError
from polygon_voice.llm.structured import StructuredSetting
from polygon_voice.masking import mask_url

Role = Literal["caller", "judge", "agent"]
ROLES: tuple[Role, ...] = get_args(Role)
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_CACHE_DIR = Path(".polygon") / "llm-cache"
_ENV_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# Seconds to wait for one answer when `timeout` is not set (docs/llm.md, "Retries, timeouts
# and limits"). A hosted API answers in seconds; a model on a CPU server of one's own takes
# 30-300 s, and more while its one slot is busy with another request.
REMOTE_TIMEOUT = 60.0
LOCAL_TIMEOUT = 600.0
# The prompt agent's turn limit, unless `turn_timeout` is set: this many times the request
# timeout, so one whole answer (at most 1.25 x timeout) fits with room for a quick retry, while
# the turn still ends well before every retry of every round has run (5 x 1.25 x timeout).
TURN_TIMEOUT_FACTOR = 2.0
# Answer tokens on a local server when `max_tokens` is not set: without a cap llama-cpp-python
# generates until the model stops or the context is full (a persona request ran for nine
# minutes, and the one slot with it). Far above what any role's answer needs (a judge's eight
# criteria with evidence: under 1,000); hosted APIs keep their own default.
LOCAL_MAX_TOKENS = 2048
Profile = Literal["auto", "remote", "local"]
# Host names that never leave the machine or the local network.
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")
# Shared address space (RFC 6598): carrier NAT and VPN overlays that reach a home server.
_SHARED_ADDRESSES = ipaddress.ip_network("100.64.0.0/10")


class RoleConfig(BaseModel):
    """How one role (caller, judge or agent) reaches its model; no model means not configured."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    model: str | None = None
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    # Which defaults apply: `auto` takes the local-server ones for a loopback or private
    # address, a `.local` name or a one-word host name (a container's), else the remote ones.
    profile: Profile = "auto"
    # None: REMOTE_TIMEOUT or LOCAL_TIMEOUT by the profile (see `request_timeout`).
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    # The prompt agent's wall-clock limit per turn (the agent role); None: see `turn_limit`.
    turn_timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_retries: int = Field(default=4, ge=0)
    max_concurrency: int = Field(default=16, ge=1)
    # The endpoint's budget (docs/llm.md, "Endpoint budgets"): requests and tokens per
    # minute, shared by every role on the endpoint; None: no limit.
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)
    cache: bool | None = None
    price_in_per_1k: float = Field(default=0.0, ge=0)
    price_out_per_1k: float = Field(default=0.0, ge=0)
    # How a schema is asked for (docs/llm.md, "Structured output"); auto finds out.
    structured_output: StructuredSetting = "auto"
    # Tools and seeds of the prompt agent (docs/llm.md, "What an endpoint supports"): auto
    # uses what the start-up probe found; a value given here wins and is not probed.
    tool_choice: Literal["auto", "send", "omit"] = "auto"
    seed_max: int | None = Field(default=None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _judge_at_temperature_zero(cls, data: Any) -> Any:
        # RUB-7: the judge runs at temperature zero unless told otherwise.
        if isinstance(data, dict) and data.get("role") == "judge" and "temperature" not in data:
            data = {**data, "temperature": 0.0}
        return data

    @field_validator("base_url")
    @classmethod
    def _an_http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL, like http://localhost:8000/v1")
        return value

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # A base URL may carry its key (user:password@, ?key=...): a repr shows it masked.
        for name, value in super().__repr_args__():
            yield name, mask_url(value) if name == "base_url" else value

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        # The message must not echo the value: it may be a key pasted in by mistake.
        if value is not None and not _is_variable_name(value):
            raise ValueError(
                "must be the NAME of the environment variable that holds the key "
                "(letters, digits and _), not the key itself"
            )
        return value

    @property
    def configured(self) -> bool:
        """A role with a model is configured; without one its stage uses the deterministic one."""
        return bool(self.model)

    @property
    def local(self) -> bool:
        """Whether the local-server defaults apply (the profile, else the base URL's host)."""
        if self.profile != "auto":
            return self.profile == "local"
        return is_local_url(self.base_url)

    @property
    def request_timeout(self) -> float:
        """Seconds to wait for one answer: `timeout`, else the default for where the server is."""
        if self.timeout is not None:
            return self.timeout
        return LOCAL_TIMEOUT if self.local else REMOTE_TIMEOUT

    @property
    def answer_tokens(self) -> int | None:
        """The `max_tokens` sent: the setting, else LOCAL_MAX_TOKENS on a local server, else
        none (the API's own default)."""
        if self.max_tokens is not None:
            return self.max_tokens
        return LOCAL_MAX_TOKENS if self.local else None

    @property
    def turn_limit(self) -> float:
        """The prompt agent's wall-clock seconds per turn: `turn_timeout`, else twice the
        request timeout (docs/agents.md, "The turn limit")."""
        if self.turn_timeout is not None:
            return self.turn_timeout
        return TURN_TIMEOUT_FACTOR * self.request_timeout

    @property
    def cache_enabled(self) -> bool:
        """The response cache is on for caller and judge, off for the agent under test."""
        return self.cache if self.cache is not None else self.role != "agent"


class LLMSettings(BaseModel):
    """The three roles' settings and where responses are cached."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: dict[Role, RoleConfig]
    cache_dir: Path = DEFAULT_CACHE_DIR
    source: str | None = None

    def role(self, name: Role) -> RoleConfig:
        """The settings of one role."""
        return self.roles[name]

    def is_configured(self, name: Role) -> bool:
        """Whether the role has a model (else its stage falls back to the deterministic one)."""
        return self.roles[name].configured


# Kept per URL: the answer reads the host, never the network, so it never changes, and every
# request asks it a few times (its timeout, its max_tokens) at ~0.1 ms each.
@lru_cache(maxsize=256)
def is_local_url(url: str) -> bool:
    """Whether `url`'s host is this machine or the local network: loopback, a private,
    link-local or shared (100.64/10) address, `localhost`, a `.local` / `.internal` / `.lan`
    name, or a host name of one word (a container's or a machine's on the local network,
    never a public one)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or host.endswith(_LOCAL_SUFFIXES) or "." not in host
    shared = address.version == 4 and address in _SHARED_ADDRESSES
    return address.is_loopback or address.is_private or address.is_link_local or shared


def _is_variable_name(value: str) -> bool:
    return bool(value) and set(value) <= _ENV_NAME_CHARS and not value[0].isdigit()


ROLE_FIELDS = frozenset(RoleConfig.model_fields) - {"role"}
# Settings a role's own variable gives: POLYGON_<ROLE>_<SUFFIX>. Values are validated as the
# file's are, and an error names the variable.
_ROLE_VARIABLES = (
    ("model", "MODEL"),
    ("structured_output", "STRUCTURED_OUTPUT"),
    ("profile", "PROFILE"),
    ("timeout", "TIMEOUT"),
    ("turn_timeout", "TURN_TIMEOUT"),
    ("max_concurrency", "MAX_CONCURRENCY"),
    ("rpm", "RPM"),
    ("tpm", "TPM"),
)


def load_llm_config(
    path: str | Path | None = None, env: Mapping[str, str] | None = None
) -> LLMSettings:
    """Settings from a YAML/TOML file's `llm:` section (optional), overridden by the environment."""
    env = os.environ if env is None else env
    label = str(path) if path is not None else "LLM settings"
    section = _read_section(Path(path)) if path is not None else {}
    shared = {k: v for k, v in section.items() if k in ROLE_FIELDS}
    roles = {role: _build_role(role, label, shared, section.get(role), env) for role in ROLES}
    try:
        return LLMSettings(
            roles=roles,
            cache_dir=section.get("cache_dir", DEFAULT_CACHE_DIR),
            source=str(path) if path is not None else None,
        )
    except ValidationError as exc:
        raise LLMConfigError(f"{label}: llm.cache_dir: {exc.errors()[0]['msg']}") from None


def _read_section(path: Path) -> dict[str, Any]:
    data = _read_toml(path) if path.suffix == ".toml" else _read_yaml(path)
    if not isinstance(data, dict) or "llm" not in data:
        raise LLMConfigError(f"{path}: no `llm:` section (see docs/llm.md for an example)")
    section = data["llm"]
    if not isinstance(section, dict):
        raise LLMConfigError(f"{path}: llm: must be a mapping of settings and roles")
    _check_keys(path, "llm", section, ROLE_FIELDS | set(ROLES) | {"cache_dir"})
    return section


def _read_yaml(path: Path) -> object:
    # The reader suite files use: bounded aliases, depth and sizes; errors with their line.
    # Imported here: the scenario package imports the persona builders, which import llm.
    from polygon_voice.scenario.errors import SuiteError
    from polygon_voice.scenario.parsing import read_data

    try:
        return read_data(path, str(path))[0]
    except SuiteError as exc:
        raise LLMConfigError(str(exc)) from None


def _read_toml(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LLMConfigError(f"{path}: cannot read the LLM config file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise LLMConfigError(f"{path}: not valid UTF-8 text (byte offset {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LLMConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise LLMConfigError(f"{path}: not valid TOML: nested too deeply") from None


def _check_keys(path: Path | str, where: str, data: Mapping[str, Any], allowed: Set[str]) -> None:
    for key in data:
        if key == "api_key":
            raise LLMConfigError(
                f"{path}: {where}.api_key: API keys do not belong in config files; put the key "
                "in an environment variable and give its name as api_key_env"
            )
        if key not in allowed:
            expected = ", ".join(sorted(allowed))
            raise LLMConfigError(f"{path}: {where}.{key}: unknown setting; expected: {expected}")


def _build_role(
    role: Role, label: str, shared: dict[str, Any], own: object, env: Mapping[str, str]
) -> RoleConfig:
    if own is None:
        own = {}
    if not isinstance(own, dict):
        raise LLMConfigError(f"{label}: llm.{role}: must be a mapping of settings")
    _check_keys(label, f"llm.{role}", own, set(ROLE_FIELDS))
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for layer, where in ((shared, "llm"), (own, f"llm.{role}")):
        values.update(layer)
        origins.update({key: f"{label}: {where}.{key}" for key in layer})
    for key, (value, variable) in env_overrides(role, env).items():
        values[key] = value
        origins[key] = f"environment variable {variable}"
    try:
        return RoleConfig(role=role, **values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "?"
        where = origins.get(field, f"{label}: llm.{role}.{field}")
        message = error["msg"].removeprefix("Value error, ")
        raise LLMConfigError(f"{where} (role {role}): {message}") from None


def env_overrides(role: Role, env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The settings the environment gives `role`: field -> (value, variable it came from)."""
    prefix = f"POLYGON_{role.upper()}_"
    found: dict[str, tuple[str, str]] = {}
    for field, suffix in (("base_url", "BASE_URL"), ("api_key_env", "API_KEY")):
        for variable in (f"POLYGON_{suffix}", f"{prefix}{suffix}"):
            if env.get(variable):
                # For the key, the setting is the variable's NAME: the key stays in the environment.
                found[field] = (variable if field == "api_key_env" else env[variable], variable)
    for field, suffix in _ROLE_VARIABLES:
        if env.get(f"{prefix}{suffix}"):
            found[field] = (env[f"{prefix}{suffix}"], f"{prefix}{suffix}")
    return found
