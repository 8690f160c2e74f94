"""`polygon llm check`: what each model role's endpoint supports (docs/llm.md, "What an
endpoint supports").

Exit 0 when every role checked can work, 2 for bad input or a role that cannot work (no
model, no key, an endpoint refusing the tools the prompt agent offers), 3 when an endpoint
cannot be reached. Heavy imports are inside the command, so `polygon --help` stays fast.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import JsonOption, console, errors, fail, print_json

if TYPE_CHECKING:
    from polygon_voice.llm.capabilities import Capabilities
    from polygon_voice.llm.config import LLMSettings, Role, RoleConfig

llm_app = typer.Typer(
    help="The model endpoints of each role: `polygon llm check` (docs/llm.md).",
    no_args_is_help=True,
)
app.add_typer(llm_app, name="llm")

Source = Literal["found", "configured", "unknown"]


@dataclass(frozen=True)
class Line:
    """One capability of one role: its value, where it came from, and what it means."""

    name: str
    value: str
    source: Source
    hint: str


@llm_app.command("check")
def check_command(
    role: Annotated[
        str | None,
        typer.Option("--role", help="Check this role only: caller, judge or agent."),
    ] = None,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Probe again; ignore the capability cache.")
    ] = False,
    as_json: JsonOption = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "--llm-config",
            help="YAML/TOML file with an `llm:` section (docs/llm.md); else the environment.",
        ),
    ] = None,
) -> None:
    """Print what each configured role's endpoint supports, found or configured."""
    from polygon_voice.api.errors import ExitCode
    from polygon_voice.llm import LLMError, load_llm_config
    from polygon_voice.llm.capability_probe import ProbeTimeoutError, probe_timeout

    try:
        settings = load_llm_config(config)
        timeout = probe_timeout()
    except (LLMError, ProbeTimeoutError) as exc:
        fail(str(exc))
    roles = _roles(settings, role)
    from polygon_voice.preflight import RoleNeed, reach

    reached = reach([RoleNeed(name, "polygon llm check") for name in roles], settings)
    reports = []
    cannot_work = bool(reached.setup)
    for problem in [*reached.setup, *reached.unreachable]:
        errors.print(f"[bold red]error:[/] {escape(str(problem))}")
    for name in roles:
        config_of = settings.role(name)
        key = (config_of.base_url, config_of.model or "")
        if key not in reached.servers:
            continue
        found = _found(config_of, settings, reached.servers[key], timeout, refresh)
        lines = capability_lines(config_of, found)
        silent = sorted({n for n in found.notes.values() if "not answered within" in n})
        if silent:
            errors.print(
                f"warning: {name}: {escape(found.endpoint)} left a probe request unanswered "
                f"({escape(silent[0])}); what depends on it is unknown. A slow server needs "
                "a longer POLYGON_PROBE_TIMEOUT (seconds per request)",
                soft_wrap=True,
            )
        if _tools_refused(config_of, found):
            cannot_work = True
            errors.print(
                f"[bold red]error:[/] agent: {escape(found.endpoint)} (model "
                f"{escape(found.model)}) refuses tool calls, which the prompt agent offers. "
                "Start the server with tool calling on (vLLM: --enable-auto-tool-choice "
                "--tool-call-parser NAME) or point the agent at a model that takes tools"
            )
        reports.append((config_of, found, lines))
    if as_json:
        print_json([_as_json(c, f, lines) for c, f, lines in reports])
    else:
        _print_all(reports)
    if reached.unreachable:
        raise typer.Exit(ExitCode.INFRASTRUCTURE)
    if cannot_work:
        raise typer.Exit(ExitCode.BAD_INPUT)


def _roles(settings: LLMSettings, given: str | None) -> list[Role]:
    from polygon_voice.llm.config import ROLES

    if given is not None:
        if given not in ROLES:
            fail(f"--role {given!r}: expected one of {', '.join(ROLES)}")
        chosen: Role = next(role for role in ROLES if role == given)
        return [chosen]
    configured = [role for role in ROLES if settings.is_configured(role)]
    if not configured:
        fail(
            "no role has a model; set POLYGON_JUDGE_MODEL (or _CALLER_, _AGENT_), or give "
            "--config with llm.<role>.model (docs/llm.md)"
        )
    return configured


def _found(
    config: RoleConfig, settings: LLMSettings, server: str | None, timeout: float, refresh: bool
) -> Capabilities:
    from polygon_voice.llm.capabilities import CAPABILITIES
    from polygon_voice.llm.capability_probe import find

    key = os.environ.get(config.api_key_env) if config.api_key_env else None
    wanted = set(CAPABILITIES) - configured(config)
    record, _ = find(
        config, settings.cache_dir, wanted, key=key, timeout=timeout, server=server,
        refresh=refresh,
    )  # fmt: skip
    return record


def configured(config: RoleConfig) -> set[str]:
    """The capabilities the role's settings fix, so none is probed for it."""
    fixed = set()
    if config.structured_output != "auto":
        fixed.add("structured_output")
    if config.tool_choice != "auto":
        fixed.add("tools")
    if config.seed_max is not None:
        fixed.add("seed")
    return fixed


def _tools_refused(config: RoleConfig, found: Capabilities) -> bool:
    return config.role == "agent" and config.tool_choice == "auto" and found.tools == "refused"


# -- what each capability means -------------------------------------------------------------

_STRUCTURED_HINTS = {
    "json_schema": "response_format json_schema is taken",
    "json_object": "json_schema refused; Polygon sends {type: json_object, schema} "
    "(structured_output: json_object skips finding out)",
    "prompt": "no response_format taken; the schema goes in the prompt, checked on arrival",
}
_TOOL_HINTS = {
    "with_tool_choice": "tools taken with tool_choice: auto, which the prompt agent sends",
    "without_tool_choice": "tool_choice refused: the prompt agent sends tools without it",
    "refused": "tools refused: a prompt agent cannot work here; start the server with "
    "tool calling on",
}
_LOGPROB_HINTS = {
    "aligned": "lint tier 2 can score prompts here (POLYGON_LINT_LOGPROBS_BASE_URL)",
    "shifted": "one token late, a known server bug; lint tier 2 undoes the shift",
    "next_token": "each token scored by the distribution after it (llama-cpp-python); lint "
    "tier 2 reads the values from the alternatives one token earlier",
    "unaligned": "they do not line up with the prompt; lint tier 2 refuses this endpoint",
    "refused": "no prompt log-probabilities; lint tier 2 cannot use this endpoint",
}


def capability_lines(config: RoleConfig, found: Capabilities) -> list[Line]:
    """Each capability of the role's endpoint as `polygon llm check` shows it."""
    fixed = configured(config)
    return [
        _structured_line(config, found, "structured_output" in fixed),
        _tools_line(config, found, "tools" in fixed),
        _line(
            "tool call in probe",
            None if found.tool_called is None else ("yes" if found.tool_called else "no"),
            "the model called the offered tool"
            if found.tool_called
            else "the model answered in text; a small model may (informational)",
            found.notes.get("tools"),
        ),
        _line(
            "prompt logprobs",
            found.logprobs,
            _LOGPROB_HINTS.get(found.logprobs or ""),
            found.notes.get("logprobs"),
        ),
        _seed_line(config, found, "seed" in fixed),
        _line(
            "context length",
            None if found.context_length is None else f"{found.context_length} tokens",
            "as the server reports it",
            found.notes.get("context"),
        ),
        _line(
            "slots",
            None if found.slots is None else str(found.slots),
            "one request at a time: max_concurrency: 1 suits it"
            if found.slots == 1
            else "requests the server computes at once",
            "the server does not tell it",
        ),
    ]


def _line(name: str, value: str | None, hint: str | None, unknown_why: str | None) -> Line:
    if value is None:
        return Line(name, "unknown", "unknown", unknown_why or "not found out")
    return Line(name, value, "found", hint or "")


def _structured_line(config: RoleConfig, found: Capabilities, fixed: bool) -> Line:
    if fixed:
        setting = f"structured_output: {config.structured_output} in the settings"
        return Line("structured output", config.structured_output, "configured", setting)
    value = found.structured_output
    return _line("structured output", value, _STRUCTURED_HINTS.get(value or ""),
                 found.notes.get("structured_output"))  # fmt: skip


def _tools_line(config: RoleConfig, found: Capabilities, fixed: bool) -> Line:
    if fixed:
        setting = f"tool_choice: {config.tool_choice} in the settings"
        return Line("tools", f"tool_choice {config.tool_choice}", "configured", setting)
    value = found.tools.replace("_", " ") if found.tools else None
    hint = _TOOL_HINTS.get(found.tools or "")
    if found.tools == "refused" and found.notes.get("tools"):
        hint = f"{hint} ({found.notes['tools']})"
    return _line("tools", value, hint, found.notes.get("tools"))


def _seed_line(config: RoleConfig, found: Capabilities, fixed: bool) -> Line:
    if fixed:
        setting = f"seed_max: {config.seed_max} in the settings"
        return Line("seed range", f"up to {config.seed_max}", "configured", setting)
    if found.seeds == "refused":
        hint = "no seed taken: the prompt agent sends none, so a rerun may differ"
        return Line("seed range", "refused", "found", hint)
    value = None if found.seed_max is None else f"up to {found.seed_max}"
    hint = "Polygon's seeds stay below 2**31, inside it"
    return _line("seed range", value, hint, found.notes.get("seed"))


def _print_all(reports: list[tuple[RoleConfig, Capabilities, list[Line]]]) -> None:
    """Each role's block; a role whose endpoint, model and lines a role above already showed
    is one line naming that role, not the same block again."""
    shown: dict[tuple[str, str, str], Role] = {}
    for config, found, lines in reports:
        same = (found.endpoint, found.model, repr(lines))
        if same in shown:
            console.print(
                f"[bold]{config.role}:[/] {escape(found.endpoint)} (model "
                f"{escape(found.model)}): as {shown[same]} above"
            )
            continue
        shown[same] = config.role
        _print(config, found, lines)


def _print(config: RoleConfig, found: Capabilities, lines: list[Line]) -> None:
    kind = f", {found.server_kind}" if found.server_kind else ""
    head = f"{config.role}: {found.endpoint} (model {found.model}{kind})"
    console.print(f"[bold]{escape(head)}[/]")
    width = max(len(line.name) for line in lines)
    value_width = max(len(line.value) for line in lines)
    for line in lines:
        console.print(
            f"  {escape(line.name.ljust(width))}  {escape(line.value.ljust(value_width))}  "
            f"{line.source:<10}  {escape(line.hint)}",
            soft_wrap=True,
        )


def _as_json(config: RoleConfig, found: Capabilities, lines: list[Line]) -> dict[str, Any]:
    return {
        "role": config.role,
        "endpoint": found.endpoint,
        "model": found.model,
        "server_kind": found.server_kind,
        "found_at": found.found_at,
        "capabilities": {
            line.name: {"value": line.value, "source": line.source, "hint": line.hint}
            for line in lines
        },
        "record": found.to_json(),
    }
