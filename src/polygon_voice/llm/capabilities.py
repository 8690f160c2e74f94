"""What one endpoint and model support, found by a cheap probe and remembered.

A `Capabilities` record says which structured-output form works, whether tools are taken
with `tool_choice`, only without it, or not at all, whether a tool call came back, how the
prompt log-probabilities line up, the largest seed taken, the context length and slots when
the server tells them, and the server's kind when it can be recognised. A field that was
not asked, or not answered, is None, with the reason in `notes`.

Records are kept in the process and in `<cache_dir>/capabilities.json`, keyed by the
endpoint (masked: no key is ever written there), the model and the server's `Server`
header, so another server answering on the same port is probed anew. Entries older than
`TTL_SECONDS` are misses, and so is a damaged file. The probe itself is in
`capability_probe.py`; docs/llm.md, "What an endpoint supports", is the user's account.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from polygon_voice.llm.config import RoleConfig
from polygon_voice.llm.dialects import settle_form
from polygon_voice.llm.limits import SHARED_LIMITS
from polygon_voice.llm.structured import FORMS, StructuredForm
from polygon_voice.masking import mask_url, without_userinfo

log = logging.getLogger("polygon_voice.llm.capabilities")

Capability = Literal["structured_output", "tools", "seed", "logprobs", "context"]
CAPABILITIES: tuple[Capability, ...] = get_args(Capability)
ToolSupport = Literal["with_tool_choice", "without_tool_choice", "refused"]
LogprobSupport = Literal["aligned", "shifted", "next_token", "unaligned", "refused"]
SeedRange = Literal["int64", "uint32", "int31", "refused"]
# The seeds tried, largest first: what Go and vLLM decode, unsigned 32 bits, signed 32 bits.
SEED_TRIES: tuple[tuple[SeedRange, int], ...] = (
    ("int64", 2**63 - 1),
    ("uint32", 2**32 - 1),
    ("int31", 2**31 - 1),
)
SEED_MAX: dict[SeedRange, int] = dict(SEED_TRIES)
CACHE_FILE = "capabilities.json"
# A server is upgraded or restarted with other flags now and then: a day-old finding is
# found out again, which costs a handful of one-token requests.
TTL_SECONDS = 24 * 3600.0
MAX_ENTRIES = 256  # the file stays small however many servers (or test ports) it has seen
_MAX_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Capabilities:
    """What one endpoint + model supports; None where not asked or not answered (see notes)."""

    endpoint: str
    model: str
    server: str | None = None
    server_kind: str | None = None
    structured_output: StructuredForm | None = None
    tools: ToolSupport | None = None
    tool_called: bool | None = None
    logprobs: LogprobSupport | None = None
    seeds: SeedRange | None = None
    context_length: int | None = None
    slots: int | None = None
    found_at: float = 0.0
    probed: frozenset[Capability] = frozenset()
    notes: Mapping[str, str] = field(default_factory=dict)

    @property
    def seed_max(self) -> int | None:
        """The largest seed the endpoint took; None when unknown or when it took none."""
        return SEED_MAX.get(self.seeds) if self.seeds not in (None, "refused") else None

    def merged(self, newer: Capabilities) -> Capabilities:
        """This record with what `newer` probed laid over it (newer wins where it asked)."""
        values = asdict(self)
        for name in newer.probed:
            for key in _FIELDS_OF[name]:
                values[key] = getattr(newer, key)
        notes = {k: v for k, v in self.notes.items() if k not in newer.probed}
        values.update(
            notes={**notes, **newer.notes},
            probed=self.probed | newer.probed,
            found_at=newer.found_at,
            server=newer.server,
            server_kind=newer.server_kind or self.server_kind,
        )
        return Capabilities(**values)

    def to_json(self) -> dict[str, Any]:
        """The record as the cache file and `polygon llm check --json` write it."""
        data = asdict(self)
        data["probed"] = sorted(self.probed)
        data["notes"] = dict(self.notes)
        return data

    @classmethod
    def from_json(cls, data: object) -> Capabilities | None:
        """The record, or None for anything that is not one (a damaged cache entry)."""
        if not isinstance(data, dict):
            return None
        try:
            record = cls(**{**data, "probed": frozenset(data.get("probed", ()))})
        except TypeError:
            return None
        return record if _well_formed(record) else None


_FIELDS_OF: dict[Capability, tuple[str, ...]] = {
    "structured_output": ("structured_output",),
    "tools": ("tools", "tool_called"),
    "seed": ("seeds",),
    "logprobs": ("logprobs",),
    "context": ("context_length", "slots"),
}


def _well_formed(record: Capabilities) -> bool:
    checks = (
        isinstance(record.endpoint, str) and isinstance(record.model, str),
        record.structured_output in (None, *FORMS),
        record.tools in (None, *get_args(ToolSupport)),
        record.logprobs in (None, *get_args(LogprobSupport)),
        record.seeds in (None, *get_args(SeedRange)),
        record.tool_called in (None, True, False),
        all(_count_or_none(v) for v in (record.context_length, record.slots)),
        isinstance(record.found_at, int | float),
        record.probed <= set(CAPABILITIES),
        isinstance(record.notes, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in record.notes.items()),
        all(isinstance(v, str | None) for v in (record.server, record.server_kind)),
    )
    return all(checks)


def _count_or_none(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0)


# -- what a role needs, and what its settings already say ---------------------------------


def needed(config: RoleConfig) -> frozenset[Capability]:
    """What a run must know about the role's endpoint and is not configured.

    The caller and the judge ask for structured output; the prompt agent offers tools and
    sends seeds. What the settings fix is never probed: configured wins.
    """
    wanted: set[Capability] = set()
    if config.role in ("caller", "judge") and config.structured_output == "auto":
        wanted.add("structured_output")
    if config.role == "agent":
        if config.tool_choice == "auto":
            wanted.add("tools")
        if config.seed_max is None:
            wanted.add("seed")
    return frozenset(wanted)


def endpoint_label(base_url: str) -> str:
    """The endpoint as messages and the cache show it: no user:password@, keys masked."""
    plain, _ = without_userinfo(base_url)
    return mask_url(plain)


# -- the process's records and the ones settled for this run --------------------------------

_MEMORY: dict[str, Capabilities] = {}
_ADOPTED: dict[tuple[str, str], Capabilities] = {}
_ADOPTED_FOR: dict[tuple[str, str, str], tuple[RoleConfig, Capabilities]] = {}


def cache_key(base_url: str, model: str, server: str | None) -> str:
    """The key of an endpoint + model + server software; holds no credential."""
    return "\x1f".join((endpoint_label(base_url), model, server or ""))


def adopt(config: RoleConfig, found: Capabilities) -> None:
    """Use `found` for this process: the role's structured form is settled (no refused
    request mid-run), the prompt agent reads tools and seeds from `adopted`."""
    assert config.model is not None
    _ADOPTED[(config.base_url, config.model)] = found
    _ADOPTED_FOR[(config.base_url, config.model, config.structured_output)] = (config, found)
    if config.structured_output == "auto" and found.structured_output is not None:
        settle_form(config.base_url, config.model, found.structured_output)
    if found.slots is not None:
        # A server that said how many requests it computes at once never gets more.
        SHARED_LIMITS.set_slots(config.base_url, found.slots)


def adopted_records() -> list[tuple[RoleConfig, Capabilities]]:
    """Every record this process adopted, with the role it was adopted for: what an executor
    carries to its workers (`adopt` each there), so they start knowing what the driver's
    start-up probe found instead of finding it out again, one request at a time."""
    return list(_ADOPTED_FOR.values())


def adopted(base_url: str, model: str) -> Capabilities | None:
    """What was found for the endpoint and model before this run, if anything."""
    return _ADOPTED.get((base_url, model))


def forget_capabilities() -> None:
    """Forget every record of the process (for tests: a new fake server may reuse a port)."""
    _MEMORY.clear()
    _ADOPTED.clear()
    _ADOPTED_FOR.clear()
    SHARED_LIMITS.forget_slots()


# -- the cache file -------------------------------------------------------------------------


def cached(
    cache_dir: Path, base_url: str, model: str, server: str | None, *, now: float | None = None
) -> Capabilities | None:
    """The record in the process or the cache file, None when absent, stale or damaged."""
    key = cache_key(base_url, model, server)
    now = time.time() if now is None else now
    record = _MEMORY.get(key) or _read_file(cache_dir).get(key)
    if record is None or not 0 <= now - record.found_at < TTL_SECONDS:
        return None
    _MEMORY[key] = record
    return record


def remember(cache_dir: Path, base_url: str, record: Capabilities) -> None:
    """Keep `record` in the process and the cache file (a file that cannot be written is
    a warning: the next run probes again)."""
    key = cache_key(base_url, record.model, record.server)
    _MEMORY[key] = record
    entries = _read_file(cache_dir)
    entries[key] = record
    newest = sorted(entries.items(), key=lambda item: item[1].found_at)[-MAX_ENTRIES:]
    document = {k: v.to_json() for k, v in newest if time.time() - v.found_at < TTL_SECONDS}
    try:
        _write_atomically(cache_dir / CACHE_FILE, json.dumps(document, indent=1))
    except OSError as exc:
        log.warning("cannot write %s: %s", cache_dir / CACHE_FILE, exc.strerror or exc)


def _read_file(cache_dir: Path) -> dict[str, Capabilities]:
    path = cache_dir / CACHE_FILE
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}  # absent or damaged: a miss, never an error
    if not isinstance(data, dict):
        return {}
    entries = ((key, Capabilities.from_json(value)) for key, value in data.items())
    return {key: record for key, record in entries if record is not None}


def _write_atomically(path: Path, text: str) -> None:
    # Another process may read the file meanwhile: it sees the old one or the new one whole.
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".capabilities-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise


def missing(record: Capabilities | None, wanted: Iterable[Capability]) -> frozenset[Capability]:
    """What `wanted` asks that the record has not probed."""
    asked = record.probed if record is not None else frozenset()
    return frozenset(wanted) - asked
